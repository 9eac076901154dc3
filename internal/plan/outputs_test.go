package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// A stack output naming a key its unchanged component does not have fails
// the plan, naming the output and the keys the component has, instead of
// being left out without a word; the same output of a component the plan
// changes or destroys is not refused (its outputs are not known yet, or go).
func TestAStackOutputOfAKeyTheComponentLacksFailsThePlan(t *testing.T) {
	cfg := map[string]any{"size": 1}
	api := res("Command", cfg)
	api.Outputs = map[string]any{"url": "http://api", "port": 8080}
	st := state(map[string]*statestore.Resource{"app/api": api})
	d := desired(comp("app/api", "Command", cfg))
	d.Outputs = map[string]config.OutputRef{"api_url": {Address: "app/api", Path: []string{"url"}}, "api_uri": {Address: "app/api", Path: []string{"uri"}}}

	_, err := Build(d, st, Options{Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), "outputs.api_uri") || !strings.Contains(err.Error(), "it has: port, url") {
		t.Fatalf("plan of an output naming a missing key: %v, want an error naming outputs.api_uri and the keys app/api has", err)
	}

	changed := desired(comp("app/api", "Command", map[string]any{"size": 2}))
	changed.Outputs = d.Outputs
	if _, err := Build(changed, st, Options{Now: fixedNow}); err != nil {
		t.Errorf("plan that updates app/api: %v, want the output known after apply", err)
	}
	if _, err := Build(d, st, Options{Now: fixedNow, Destroy: true}); err != nil {
		t.Errorf("destroy plan: %v, want the outputs removed", err)
	}
}

// The plan's Changes to Outputs name every stack output whose component the
// plan changes, as Terraform's do: an output of a component created is
// added, one of a component updated, replaced or re-evaluated changes to
// (known after apply), one of a component deleted is removed; a secret one
// shows (sensitive), never its value; an output of an unchanged component
// does not show.
func TestChangesToOutputsNameEveryOutputOfAChangedComponent(t *testing.T) {
	withOutputs := func(r *statestore.Resource, outs map[string]any) *statestore.Resource {
		r.Outputs = outs
		return r
	}
	st := state(map[string]*statestore.Resource{
		"app/api":  withOutputs(res("Command", map[string]any{"size": 1}), map[string]any{"url": "http://api", "token": "tok-1"}),
		"app/db":   withOutputs(res("Command", map[string]any{"size": 1}), map[string]any{"host": "db.local"}),
		"app/web":  withOutputs(res("Command", map[string]any{"size": 1}, "app/api"), map[string]any{"addr": "web.local"}),
		"app/same": withOutputs(res("Command", map[string]any{"size": 1}), map[string]any{"addr": "same.local"}),
		"app/old":  withOutputs(res("Command", map[string]any{"size": 1}), map[string]any{"addr": "old.local"}),
	})
	st.Outputs = map[string]any{
		"api_url": "http://api", "api_token": sensitive.Wrap("tok-1"), "db_host": "db.local",
		"web_addr": "web.local", "same_addr": "same.local", "old_addr": "old.local",
	}
	d := desired(
		comp("app/api", "Command", map[string]any{"size": 2}),
		comp("app/db", "Command", map[string]any{"size": 1}),
		comp("app/web", "Command", map[string]any{"size": 1}, "app/api"),
		comp("app/same", "Command", map[string]any{"size": 1}),
		comp("app/new", "Command", map[string]any{"size": 1}),
	)
	ref := func(addr, key string) config.OutputRef { return config.OutputRef{Address: addr, Path: []string{key}} }
	d.Outputs = map[string]config.OutputRef{
		"api_url": ref("app/api", "url"), "api_token": ref("app/api", "token"), "db_host": ref("app/db", "host"),
		"web_addr": ref("app/web", "addr"), "same_addr": ref("app/same", "addr"), "new_addr": ref("app/new", "addr"),
	}

	p, err := Build(d, st, Options{Now: fixedNow, Replace: []string{"app/db"}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := KnownAfterApply
	want := []FieldDiff{
		{Path: "api_token", Op: OpChange, Old: Masked, New: unknown, Sensitive: true, Unknown: true},
		{Path: "api_url", Op: OpChange, Old: "http://api", New: unknown, Unknown: true},
		{Path: "db_host", Op: OpChange, Old: "db.local", New: unknown, Unknown: true},
		{Path: "new_addr", Op: OpAdd, New: unknown, Unknown: true},
		{Path: "web_addr", Op: OpChange, Old: "web.local", New: unknown, Unknown: true},
		{Path: "old_addr", Op: OpRemove, Old: "old.local"},
	}
	if diff := cmp.Diff(want, p.Outputs); diff != "" {
		t.Errorf("Changes to Outputs (-want +got):\n%s\nsteps: %s", diff, addrs(p.Steps))
	}
	if strings.Contains(fmt.Sprint(p.Document().Outputs), "tok-1") {
		t.Errorf("the plan's outputs hold the secret: %v", p.Document().Outputs)
	}

	// A destroy removes every output, the secret one masked.
	p, err = Build(d, st, Options{Now: fixedNow, Destroy: true})
	if err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, f := range p.Outputs {
		if f.Op != OpRemove || f.Unknown {
			t.Errorf("destroy: %+v, want a removal", f)
		}
		removed = append(removed, fmt.Sprintf("%s=%v", f.Path, f.Old))
	}
	if got, want := strings.Join(removed, " "), "api_token=(sensitive) api_url=http://api db_host=db.local same_addr=same.local web_addr=web.local old_addr=old.local"; got != want {
		t.Errorf("destroy removes\n %s\nwant\n %s", got, want)
	}
}

// A plan read from a file (show, deploy --plan) is foreign data: its
// Changes to Outputs are masked again in the document plan --json and
// policies read, whatever the file holds, and a value known only after the
// apply stays (known after apply).
func TestDocumentMasksTheChangesToOutputsAgain(t *testing.T) {
	p := &Plan{Outputs: []FieldDiff{
		{Path: "api_token", Op: OpChange, Old: "tok-1", New: "tok-2", Sensitive: true},
		{Path: "db_password", Op: OpChange, Old: "hunter2", New: KnownAfterApply, Sensitive: true, Unknown: true},
	}}
	got := p.Document().Outputs
	want := []FieldDiff{
		{Path: "api_token", Op: OpChange, Old: Masked, New: Masked, Sensitive: true},
		{Path: "db_password", Op: OpChange, Old: Masked, New: KnownAfterApply, Sensitive: true, Unknown: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("document outputs (-want +got):\n%s", diff)
	}
	if p.Outputs[0].Old != "tok-1" {
		t.Errorf("Document changed the plan: %v", p.Outputs)
	}
}
