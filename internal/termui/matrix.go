package termui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// MatrixEntry is one job of `deployer stacks --matrix`
// (docs/many-stacks.md#one-job-per-stack-the-matrix).
type MatrixEntry struct {
	Stack string `json:"stack"`
	Dir   string `json:"dir"`
	// Upstream is every stack of the run this one reads, directly or
	// through other stacks of the run, sorted: what `deploy --run-id`
	// waits for (--upstream).
	Upstream []string `json:"upstream"`
}

// RenderMatrix prints, on one line, the JSON GitHub Actions'
// strategy.matrix takes through fromJSON: {"include": [entry, ...]}, one
// entry per stack of sel's run in dependency order; with changedSince
// (--changed-since REF) the stacks it selected go on stderr first.
func RenderMatrix(ios *IOStreams, sel *runner.Selection, changedSince string) error {
	inRun := map[string]bool{}
	for _, st := range sel.Set.Stacks {
		if st.InEnv && (sel.Only == nil || sel.Only[st.Name]) {
			inRun[st.Name] = true
		}
	}
	if ref := changedSince; ref != "" {
		if len(inRun) == 0 {
			fmt.Fprintf(ios.ErrOut, "No stack changed since %s.\n", ref)
		} else {
			fmt.Fprintf(ios.ErrOut, "Changed since %s: %s; with the stacks that read them: %s.\n", ref,
				strings.Join(sel.Changed, ", "), strings.Join(sel.Order(runner.OpDeploy), ", "))
		}
	}
	out := struct {
		Include []MatrixEntry `json:"include"`
	}{Include: []MatrixEntry{}}
	for _, st := range sel.Set.Stacks {
		if inRun[st.Name] {
			out.Include = append(out.Include, MatrixEntry{Stack: st.Name, Dir: st.Dir, Upstream: upstreamIn(sel.Set, st.Name, inRun)})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(ios.Out, string(b))
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
