package termui

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/stacks"
)

// RenderStacks prints the stacks of set for `deployer stacks`: JSON with
// asJSON, else the graph in graph's language ("mermaid", "dot"), else a
// table in dependency order (docs/many-stacks.md).
func RenderStacks(ios *IOStreams, set *stacks.Set, asJSON bool, graph string) error {
	switch {
	case asJSON:
		return ios.PrintJSON(stacksJSON(set))
	case graph == "mermaid":
		writeMermaid(ios.Out, set)
	case graph == "dot":
		writeDOT(ios.Out, set)
	default:
		writeStacksTable(ios.Out, set)
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
	tw := NewTable(w)
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, name, st.Dir, OrDash(strings.Join(reads, ", ")), OrDash(strings.Join(set.Consumers(st.Name), ", ")))
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
