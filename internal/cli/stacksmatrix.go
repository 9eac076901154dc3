package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// matrixEntry is one job of `deployer stacks --matrix`
// (docs/many-stacks.md#one-job-per-stack-the-matrix).
type matrixEntry struct {
	Stack string `json:"stack"`
	Dir   string `json:"dir"`
	// Upstream is every stack of the run this one reads, directly or
	// through other stacks of the run, sorted: what `deploy --run-id`
	// waits for (--upstream).
	Upstream []string `json:"upstream"`
}

// runStacksMatrix prints, on one line, the JSON GitHub Actions'
// strategy.matrix takes through fromJSON: {"include": [entry, ...]}, one
// entry per stack of the run in dependency order.
func runStacksMatrix(ctx context.Context, opts *StacksOptions) error {
	sel, err := runner.SelectStacks(ctx, runner.SelectRequest{Root: ".", Env: opts.Env, Op: runner.OpDeploy, ChangedSince: opts.ChangedSince, Load: opts.Load})
	if err != nil {
		return err
	}
	inRun := map[string]bool{}
	for _, st := range sel.Set.Stacks {
		if st.InEnv && (sel.Only == nil || sel.Only[st.Name]) {
			inRun[st.Name] = true
		}
	}
	if ref := opts.ChangedSince; ref != "" {
		if len(inRun) == 0 {
			fmt.Fprintf(opts.IO.ErrOut, "No stack changed since %s.\n", ref)
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "Changed since %s: %s; with the stacks that read them: %s.\n", ref,
				strings.Join(sel.Changed, ", "), strings.Join(sel.Order(runner.OpDeploy), ", "))
		}
	}
	out := struct {
		Include []matrixEntry `json:"include"`
	}{Include: []matrixEntry{}}
	for _, st := range sel.Set.Stacks {
		if inRun[st.Name] {
			out.Include = append(out.Include, matrixEntry{Stack: st.Name, Dir: st.Dir, Upstream: upstreamIn(sel.Set, st.Name, inRun)})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(opts.IO.Out, string(b))
	return err
}

// upstreamIn returns the stacks of run that name reads, directly or
// through other stacks, in the set's dependency order.
func upstreamIn(set *stacks.Set, name string, run map[string]bool) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		for _, p := range set.Producers(n) {
			if !seen[p] {
				seen[p] = true
				visit(p)
			}
		}
	}
	visit(name)
	out := []string{}
	for _, st := range set.Stacks {
		if seen[st.Name] && run[st.Name] {
			out = append(out, st.Name)
		}
	}
	return out
}

// checkMatrix refuses --matrix without -e or with --json/--graph, and
// --changed-since without --matrix.
func (o *StacksOptions) checkMatrix() error {
	switch {
	case o.ChangedSince != "" && !o.Matrix:
		return &UsageError{Msg: "--changed-since goes with --matrix (plan and deploy take it with --all)"}
	case !o.Matrix:
		return nil
	case o.Env == "":
		return &UsageError{Msg: "--matrix needs -e ENV: a run deploys one environment"}
	case o.JSON || o.Graph != "":
		return &UsageError{Msg: "--matrix prints JSON already: drop --json and --graph"}
	}
	return nil
}
