package plan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// chain is a/x <- a/y <- a/z (z depends on y, y on x), all in state with
// outputs; recorded inputs when withInputs.
func chain(withInputs bool) *statestore.State {
	st := state(map[string]*statestore.Resource{
		"a/x": res("Command", map[string]any{"v": "1"}),
		"a/y": res("Command", map[string]any{"v": "1"}, "a/x"),
		"a/z": res("Command", map[string]any{"v": "1"}, "a/y"),
	})
	st.Resources["a/x"].Outputs = map[string]any{"id": "x1", "password": "hunter2"}
	st.Resources["a/y"].Outputs = map[string]any{"id": "y1"}
	if withInputs {
		st.Resources["a/y"].Inputs = ResolveInputs([]string{"a/x"}, func(string) map[string]any { return st.Resources["a/x"].Outputs })
		st.Resources["a/z"].Inputs = ResolveInputs([]string{"a/y"}, func(string) map[string]any { return st.Resources["a/y"].Outputs })
	}
	return st
}

func buildChain(t *testing.T, xv string, st *statestore.State, scope string) *Plan {
	t.Helper()
	d := desired(
		comp("a/x", "Command", map[string]any{"v": xv}),
		comp("a/y", "Command", map[string]any{"v": "1"}, "a/x"),
		comp("a/z", "Command", map[string]any{"v": "1"}, "a/y"),
	)
	p, err := Build(d, st, Options{Now: fixedNow, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func stepOf(p *Plan, addr string) Step {
	for _, s := range p.Steps {
		if s.Address == addr {
			return s
		}
	}
	return Step{}
}

func TestDependentsOfAChangeAreReevaluated(t *testing.T) {
	for _, withInputs := range []bool{true, false} {
		p := buildChain(t, "2", chain(withInputs), "")
		if s := stepOf(p, "a/x"); s.Action != Update || s.Reevaluate {
			t.Errorf("a/x: %+v", s)
		}
		for addr, from := range map[string]string{"a/y": "a/x", "a/z": "a/y"} {
			s := stepOf(p, addr)
			if s.Action != NoOp || !s.Reevaluate || !slices.Equal(s.InputsFrom, []string{from}) {
				t.Errorf("%s: action %s reevaluate %v inputs_from %v; want no-op re-evaluated from %s", addr, s.Action, s.Reevaluate, s.InputsFrom, from)
			}
		}
		if p.Summary.Reevaluate != 2 || p.Summary.NoOp != 2 || !p.HasChanges() || len(p.Changes()) != 3 {
			t.Errorf("summary %+v, %d changes", p.Summary, len(p.Changes()))
		}
		data, _ := json.Marshal(stepOf(p, "a/y"))
		if !strings.Contains(string(data), `"reevaluate":true,"inputs_from":["a/x"]`) {
			t.Errorf("JSON of a re-evaluated step: %s", data)
		}
	}
}

// A state written before inputs were recorded plans no change on an
// unchanged stack; so does one with inputs.
func TestUnchangedStackHasNoChangesWithOrWithoutRecordedInputs(t *testing.T) {
	for _, withInputs := range []bool{true, false} {
		if p := buildChain(t, "1", chain(withInputs), ""); p.HasChanges() {
			t.Errorf("inputs recorded %v: changes %v", withInputs, addrs(p.Changes()))
		}
	}
}

// A dependency whose outputs moved on after its dependent was applied (a
// scoped deploy) makes the dependent an update with (inputs) diffs; secret
// outputs are compared by digest and shown masked.
func TestRecordedInputsThatDifferFromStateAreAnUpdate(t *testing.T) {
	st := chain(true)
	st.Resources["a/x"].Outputs = map[string]any{"id": "x2", "password": "hunter3"}
	p := buildChain(t, "1", st, "")
	y := stepOf(p, "a/y")
	want := []FieldDiff{
		{Path: "(inputs).a/x.id", Old: "x1", New: "x2", Op: OpChange},
		{Path: "(inputs).a/x.password", Old: Masked, New: Masked, Op: OpChange, Sensitive: true},
	}
	if y.Action != Update || !cmp.Equal(want, y.Diffs) {
		t.Errorf("a/y: action %s diffs %s", y.Action, cmp.Diff(want, y.Diffs))
	}
	if z := stepOf(p, "a/z"); !z.Reevaluate {
		t.Errorf("a/z should be re-evaluated after a/y's update: %+v", z)
	}
	// A digest, itself a secret value: the Sealer encrypts it in the state.
	recV := st.Resources["a/y"].Inputs.Dependencies["a/x"]["password"]
	rec, _ := recV.(map[string]any)["value"].(string)
	if !IsSecretValue(recV) || !strings.HasPrefix(rec, "sha256:") || strings.Contains(rec, "hunter") {
		t.Errorf("a secret output is recorded as %v, want a digest marked secret", recV)
	}
}

func TestScopedPlanNamesDependentsOutsideItsScope(t *testing.T) {
	d := desired(
		comp("a/x", "Command", map[string]any{"v": "2"}),
		comp("a/y", "Command", map[string]any{"v": "1"}, "a/x"),
		comp("b/site", "Command", map[string]any{"v": "1"}, "a/y"),
		comp("b/other", "Command", map[string]any{"v": "1"}),
	)
	st := chain(false)
	st.Resources["b/site"] = res("Command", map[string]any{"v": "1"}, "a/y")
	st.Resources["b/other"] = res("Command", map[string]any{"v": "1"})
	p, err := Build(d, st, Options{Now: fixedNow, Scope: "a/x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Dependent{{Address: "a/y", InputsFrom: []string{"a/x"}}, {Address: "b/site", InputsFrom: []string{"a/y"}}}
	if diff := cmp.Diff(want, p.OutOfScope); diff != "" {
		t.Errorf("out of scope (-want +got):\n%s", diff)
	}
	if len(p.Steps) != 1 || p.Steps[0].Address != "a/x" {
		t.Errorf("steps = %s", addrs(p.Steps))
	}
}

func TestPredecessorsFollowTheOrderRules(t *testing.T) {
	steps := []Step{
		{Address: "a/x", Action: Update, InputDeps: []string{}},
		{Address: "a/y", Action: Update, InputDeps: []string{"a/x"}},
		{Address: "a/z", Action: Create, InputDeps: []string{"a/x", "a/y"}},
		{Address: "a/w", Action: Update, InputDeps: []string{}},
	}
	got := Predecessors(steps)
	want := [][]int{nil, {0}, {0, 1}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("predecessors (-want +got):\n%s", diff)
	}
}

// Inputs recorded before digests were secret values (a plain "sha256:"
// text) equal the same digest recorded now: no spurious update.
func TestPlainAndSecretDigestsOfOneValueAreEqual(t *testing.T) {
	now := ResolveInputs([]string{"a/x"}, func(string) map[string]any {
		return map[string]any{"password": "hunter3", "token": map[string]any{"secret": true, "value": "t0k3n"}, "id": "x"}
	})
	old := &statestore.ResolvedInputs{Dependencies: map[string]map[string]any{"a/x": {
		"password": now.Dependencies["a/x"]["password"].(map[string]any)["value"],
		"token":    now.Dependencies["a/x"]["token"].(map[string]any)["value"], "id": "x"}}}
	if !InputsEqual(old, now) || len(InputDiffs(old, now)) != 0 {
		t.Errorf("plain and secret digests of one value should be equal: %v / %v", old.Dependencies, now.Dependencies)
	}
	old.Dependencies["a/x"]["password"] = "sha256:0000"
	if InputsEqual(old, now) {
		t.Error("different digests compare equal")
	}
}
