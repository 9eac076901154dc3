package app

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// Shell completion of names (docs/commands.md "Shell completion"): every
// suggestion is read from deployer.yaml (or, for -s without one, the
// deployer.yaml files under the working directory) and the directory
// listing; no backend is opened, no key is read.

// completer answers the completion of one flag or argument from what it
// has been typed so far.
type completer func(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective)

// flagCompleters are the flags whose values complete, by flag name: every
// command that has the flag gets it.
var flagCompleters = map[string]completer{
	"environment": completeEnvironments,
	"stack":       completeStacks,
	"service":     completeServices,
	"component":   completeComponents,
	"exclude":     completeExcludes,
	"plan":        completePlanFiles,
}

// RegisterCompletions walks the command tree under root and registers the
// completers of flagCompleters on every command that has those flags, and
// those of argCompleters on their commands' positional arguments.
func RegisterCompletions(root *cobra.Command, f *Factory) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range flagCompleters {
			if fl := c.Flags().Lookup(name); fl != nil && fl.Value.Type() != "bool" {
				_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
					return fn(f, toComplete)
				})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path, fn := range argCompleters {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.CommandPath() != root.Name()+" "+path {
			continue
		}
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return fn(f, args, toComplete)
		}
	}
}

// argCompleter answers the completion of a positional argument, given the
// ones before it.
type argCompleter func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// argCompleters are the commands whose positional arguments complete, by
// command path under the root.
var argCompleters = map[string]argCompleter{
	"show": func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completePlanFiles(f, toComplete)
	},
	// state rm ADDR...: components, each once.
	"state rm": func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return matchingNotGiven(addresses(f, false), args, toComplete), cobra.ShellCompDirectiveNoFileComp
	},
	// state mv FROM TO: components or services. FROM is often an address
	// deployer.yaml no longer has (renamed): it completes from
	// deployer.yaml as everything else, never from the state.
	"state mv": func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matchingNotGiven(addresses(f, true), args, toComplete), cobra.ShellCompDirectiveNoFileComp
	},
	// import ADDR ID: the component; the id is the user's.
	"import": func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matching(addresses(f, false), toComplete), cobra.ShellCompDirectiveNoFileComp
	},
	// output [NAME]: the stack's outputs: of deployer.yaml.
	"output": func(f *Factory, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var names []string
		if cfg := completionConfig(f); cfg != nil && len(args) == 0 {
			names = slices.Collect(maps.Keys(cfg.Outputs))
		}
		return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	},
}

// matchingNotGiven is matching less the names already in args.
func matchingNotGiven(names, args []string, prefix string) []string {
	return slices.DeleteFunc(matching(names, prefix), func(n string) bool { return slices.Contains(args, n) })
}

// completionConfig loads the deployer.yaml the command would read
// (--config, DEPLOYER_CONFIG, ./deployer.yaml); nil when there is none or
// it does not load.
func completionConfig(f *Factory) *config.Config {
	path := f.ConfigPath
	if path == "" && f.Getenv != nil {
		path = f.Getenv("DEPLOYER_CONFIG")
	}
	if path == "" {
		path = stacks.ConfigFile
	}
	if f.StackConfig == nil {
		return nil
	}
	cfg, err := f.StackConfig(path)
	if err != nil {
		return nil
	}
	return cfg
}

// matching keeps the names that start with prefix, sorted.
func matching(names []string, prefix string) []string {
	out := []string{}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func completeEnvironments(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	var names []string
	if cfg := completionConfig(f); cfg != nil {
		names = slices.Collect(maps.Keys(cfg.Environments))
	}
	return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeStacks offers the stack of deployer.yaml or, without one, the
// stacks under the working directory (as deployer stacks finds them).
func completeStacks(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	var names []string
	if cfg := completionConfig(f); cfg != nil {
		names = append(names, cfg.Stack)
	} else if f.StackConfig != nil {
		if set, err := stacks.Discover(".", stacks.Options{Load: f.StackConfig}); err == nil {
			for _, st := range set.Stacks {
				names = append(names, st.Name)
			}
		}
	}
	return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func completeServices(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	var names []string
	if cfg := completionConfig(f); cfg != nil {
		names = slices.Collect(maps.Keys(cfg.Services))
	}
	return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// addresses are the SERVICE/COMPONENT addresses of deployer.yaml, with
// the services themselves when withServices.
func addresses(f *Factory, withServices bool) []string {
	var names []string
	if cfg := completionConfig(f); cfg != nil {
		for svc, s := range cfg.Services {
			if withServices {
				names = append(names, svc)
			}
			for comp := range s.Components {
				names = append(names, svc+"/"+comp)
			}
		}
	}
	return names
}

// completeList completes the last item of a comma list (--component and
// --exclude take several), keeping the items before it and leaving out
// the ones already given.
func completeList(names []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := strings.Split(done, ",")
	var out []string
	for _, n := range matching(names, last) {
		if !slices.Contains(given, n) {
			out = append(out, done+n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func completeComponents(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeList(addresses(f, false), toComplete)
}

func completeExcludes(f *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeList(addresses(f, true), toComplete)
}

// completePlanFiles offers the saved plans (files plan --out wrote) and
// the directories in the directory toComplete names, without a trailing
// space after a directory so the path can go on.
func completePlanFiles(_ *Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	dir, base := filepath.Split(toComplete)
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	dirs := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		switch {
		case e.IsDir():
			out, dirs = append(out, dir+name+"/"), true
		case e.Type().IsRegular() && isSavedPlan(filepath.Join(dir, name)):
			out = append(out, dir+name)
		}
	}
	directive := cobra.ShellCompDirectiveNoFileComp
	if dirs {
		directive |= cobra.ShellCompDirectiveNoSpace
	}
	return out, directive
}

// isSavedPlan reports whether path holds a plan plan.ReadFile accepts; a
// file that does not start with "{" is not read further.
func isSavedPlan(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	head := make([]byte, 1)
	_, err = io.ReadFull(fh, head)
	fh.Close()
	if err != nil || head[0] != '{' {
		return false
	}
	_, err = plan.ReadFile(path)
	return err == nil
}
