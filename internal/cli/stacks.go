package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/termui"
)

// StacksOptions are the options of `deployer stacks` (docs/many-stacks.md).
type StacksOptions struct {
	IO *termui.IOStreams

	Env   string // -e: resolve references with this environment's overrides
	Graph string // --graph mermaid|dot
	JSON  bool
	// Matrix is --matrix: the GitHub Actions matrix of the run
	// (stacksmatrix.go), with ChangedSince (--changed-since).
	Matrix       bool
	ChangedSince string
	// Load loads one stack's deployer.yaml (--matrix).
	Load func(path string) (*config.Config, error)

	// Discover finds the stacks under the working directory
	// (stacks.Discover with the app.Factory's loader).
	Discover func(env string) (*stacks.Set, error)
}

// NewCmdStacks returns `deployer stacks`; runF replaces runStacks in tests.
func NewCmdStacks(f *app.Factory, runF func(context.Context, *StacksOptions) error) *cobra.Command {
	opts := &StacksOptions{IO: f.IO, Load: f.StackConfig, Discover: func(env string) (*stacks.Set, error) {
		return stacks.Discover(".", stacks.Options{Env: env, Load: f.StackConfig})
	}}
	cmd := &cobra.Command{
		Use:   "stacks",
		Short: "List the stacks under the working directory in dependency order, with what each reads",
		Long: heredoc.Doc(`
			Finds every deployer.yaml under the working directory (skipping hidden directories such as .git and
			.deployer, node_modules and vendor; a deployer-stacks.yaml there may list or exclude paths) and orders
			the stacks so that each comes after the stacks its StackReference components read: the order of
			plan, deploy and destroy --all (docs/many-stacks.md).`),
		Example: `  deployer stacks
  deployer stacks -e prod --json
  deployer stacks --graph mermaid > stacks.mmd
  deployer stacks --graph dot | dot -Tsvg > stacks.svg
  deployer stacks -e prod --matrix --changed-since origin/main`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Graph != "" && opts.Graph != "mermaid" && opts.Graph != "dot" {
				return &exitcode.UsageError{Msg: fmt.Sprintf("--graph %q: want mermaid or dot", opts.Graph)}
			}
			if opts.Env != "" {
				if err := app.ValidateName("environment", opts.Env); err != nil {
					return err
				}
			}
			if f.ConfigPath != "" {
				return &exitcode.UsageError{Msg: "deployer stacks finds every deployer.yaml under the working directory: drop --config (DEPLOYER_CONFIG)"}
			}
			opts.JSON = f.JSON
			if opts.JSON && opts.Graph != "" {
				return &exitcode.UsageError{Msg: "use either --json or --graph"}
			}
			if err := opts.checkMatrix(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.Matrix {
				return runStacksMatrix(cmd.Context(), opts)
			}
			return runStacks(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Env, "environment", "e", "", "resolve references with this environment's overrides (default: as written)")
	cmd.Flags().StringVar(&opts.Graph, "graph", "", "print the graph as mermaid or dot instead of the table")
	cmd.Flags().BoolVar(&opts.Matrix, "matrix", false, "print the GitHub Actions matrix of the run (needs -e): {\"include\": [{stack, dir, upstream}]}")
	cmd.Flags().StringVar(&opts.ChangedSince, "changed-since", "", "with --matrix: only the stacks changed since git revision REF, and the stacks that read them")
	return cmd
}

func runStacks(opts *StacksOptions) error {
	set, err := opts.Discover(opts.Env)
	if err != nil {
		return err
	}
	if err := set.CheckBackends(); err != nil {
		// Listed all the same (the graph is right); --all runs refuse it.
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s; plan, deploy and destroy --all refuse these stacks until then\n", err)
	}
	switch {
	case opts.JSON:
		return opts.IO.PrintJSON(stacksJSON(set))
	case opts.Graph == "mermaid":
		writeMermaid(opts.IO.Out, set)
	case opts.Graph == "dot":
		writeDOT(opts.IO.Out, set)
	default:
		writeStacksTable(opts.IO.Out, set)
	}
	return nil
}

// refText is "net", "net (prod)" or "net (external)".
func refText(r stacks.Ref) string {
	var notes []string
	if r.Env != "" {
		notes = append(notes, "environment "+r.Env)
	}
	if r.External {
		notes = append(notes, "external")
	}
	if len(notes) == 0 {
		return r.Stack
	}
	return r.Stack + " (" + strings.Join(notes, ", ") + ")"
}

func writeStacksTable(w io.Writer, set *stacks.Set) {
	tw := termui.NewTable(w)
	fmt.Fprintln(tw, "#\tSTACK\tDIR\tREADS\tREAD BY")
	for i, st := range set.Stacks {
		var reads []string
		seen := map[string]bool{}
		for _, r := range st.Refs {
			if t := refText(r); !seen[t] {
				seen[t] = true
				reads = append(reads, t)
			}
		}
		name := st.Name
		if !st.InEnv {
			name += " (not in " + set.Env + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, name, st.Dir, termui.OrDash(strings.Join(reads, ", ")), termui.OrDash(strings.Join(set.Consumers(st.Name), ", ")))
	}
	tw.Flush()
	env := "every environment"
	if set.Env != "" {
		env = "environment " + set.Env
	}
	fmt.Fprintf(w, "\n%d stacks under %s, in dependency order for %s: deploy --all goes top to bottom, destroy --all bottom to top.\n",
		len(set.Stacks), set.Root, env)
}

type stackListJSON struct {
	Name          string       `json:"name"`
	Dir           string       `json:"dir"`
	Config        string       `json:"config"`
	Order         int          `json:"order"`
	InEnvironment bool         `json:"in_environment"`
	References    []stacks.Ref `json:"references"`
	DependsOn     []string     `json:"depends_on"`
	ReadBy        []string     `json:"read_by"`
}

func stacksJSON(set *stacks.Set) any {
	out := struct {
		Root        string          `json:"root"`
		Environment string          `json:"environment,omitempty"`
		Stacks      []stackListJSON `json:"stacks"`
	}{Root: set.Root, Environment: set.Env, Stacks: []stackListJSON{}}
	for i, st := range set.Stacks {
		out.Stacks = append(out.Stacks, stackListJSON{Name: st.Name, Dir: st.Dir, Config: st.Config.Path, Order: i + 1, InEnvironment: st.InEnv,
			References: nonNilRefs(st.Refs), DependsOn: nonNilStrings(set.Producers(st.Name)), ReadBy: nonNilStrings(set.Consumers(st.Name))})
	}
	return out
}

func nonNilRefs(r []stacks.Ref) []stacks.Ref {
	if r == nil {
		return []stacks.Ref{}
	}
	return r
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeMermaid draws producers -> consumers (the deploy order); external
// stacks are dashed.
func writeMermaid(w io.Writer, set *stacks.Set) {
	fmt.Fprintln(w, "graph LR")
	id := map[string]string{}
	for i, st := range set.Stacks {
		id[st.Name] = "s" + strconv.Itoa(i)
		fmt.Fprintf(w, "  %s[\"%s<br/><small>%s</small>\"]\n", id[st.Name], mermaidText(st.Name), mermaidText(st.Dir))
	}
	ext := map[string]bool{}
	for _, st := range set.Stacks {
		for _, r := range st.Refs {
			if r.External && !ext[r.Stack] {
				ext[r.Stack] = true
				id[r.Stack] = "x" + strconv.Itoa(len(ext))
				fmt.Fprintf(w, "  %s[\"%s<br/><small>external</small>\"]:::external\n", id[r.Stack], mermaidText(r.Stack))
			}
		}
	}
	for _, st := range set.Stacks {
		for _, p := range set.Producers(st.Name) {
			fmt.Fprintf(w, "  %s --> %s\n", id[p], id[st.Name])
		}
		seen := map[string]bool{}
		for _, r := range st.Refs {
			if r.External && !seen[r.Stack] {
				seen[r.Stack] = true
				fmt.Fprintf(w, "  %s -.-> %s\n", id[r.Stack], id[st.Name])
			}
		}
	}
	if len(ext) > 0 {
		fmt.Fprintln(w, "  classDef external stroke-dasharray: 5 5")
	}
}

func mermaidText(s string) string { return strings.ReplaceAll(s, `"`, "#quot;") }

// writeDOT is the same graph for Graphviz.
func writeDOT(w io.Writer, set *stacks.Set) {
	fmt.Fprintln(w, "digraph stacks {\n  rankdir=LR;\n  node [shape=box];")
	for _, st := range set.Stacks {
		fmt.Fprintf(w, "  %s [label=%s];\n", strconv.Quote(st.Name), strconv.Quote(st.Name+"\n"+st.Dir))
	}
	ext := map[string]bool{}
	for _, st := range set.Stacks {
		for _, p := range set.Producers(st.Name) {
			fmt.Fprintf(w, "  %s -> %s;\n", strconv.Quote(p), strconv.Quote(st.Name))
		}
		for _, r := range st.Refs {
			if !r.External {
				continue
			}
			if !ext[r.Stack] {
				ext[r.Stack] = true
				fmt.Fprintf(w, "  %s [label=%s, style=dashed];\n", strconv.Quote(r.Stack), strconv.Quote(r.Stack+"\nexternal"))
			}
			fmt.Fprintf(w, "  %s -> %s [style=dashed];\n", strconv.Quote(r.Stack), strconv.Quote(st.Name))
		}
	}
	fmt.Fprintln(w, "}")
}
