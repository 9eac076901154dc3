package plan

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

func movedFixture() *statestore.State {
	st := statestore.NewState("s", "dev")
	st.Resources = map[string]*statestore.Resource{
		"data/db":    {Kind: "Command", Outputs: map[string]any{"url": "u"}, Lifecycle: statestore.Lifecycle{Version: 7}, Dependencies: []string{}},
		"data/cache": {Kind: "Command", Dependencies: []string{}},
		"app/api": {Kind: "Command", Dependencies: []string{"data/db", "data/cache"},
			Inputs: &statestore.ResolvedInputs{Dependencies: map[string]map[string]any{"data/db": {"url": "u"}, "data/cache": {}}}},
	}
	return st
}

func TestApplyMovesKeepsEntriesAndRenamesDependents(t *testing.T) {
	st := movedFixture()
	out, moves, err := ApplyMoves(st, []config.Move{{From: "data/db", To: "data/database"}, {From: "data", To: "storage"}, {From: "gone/x", To: "app/x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Move{{From: "data/db", To: "data/database"}, {From: "data/cache", To: "storage/cache"}, {From: "data/database", To: "storage/database"}}
	if diff := cmp.Diff(want, moves); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
	if r := out.Resources["storage/database"]; r != st.Resources["data/db"] {
		t.Errorf("the moved entry should be the same entry, got %+v", r)
	}
	api := out.Resources["app/api"]
	if diff := cmp.Diff([]string{"storage/database", "storage/cache"}, api.Dependencies); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if _, ok := api.Inputs.Dependencies["storage/database"]; !ok || len(api.Inputs.Dependencies) != 2 {
		t.Errorf("recorded inputs should follow: %v", api.Inputs.Dependencies)
	}
	if len(st.Resources) != 3 || st.Resources["app/api"].Dependencies[0] != "data/db" {
		t.Errorf("the given state must not change")
	}
}

func TestApplyMovesRefusesATakenAddress(t *testing.T) {
	_, _, err := ApplyMoves(movedFixture(), []config.Move{{From: "data/db", To: "data/cache"}})
	var me *MoveError
	if !errors.As(err, &me) || me.To != "data/cache" {
		t.Fatalf("err = %v, want a MoveError for data/cache", err)
	}
}

func TestApplyMovesWithNothingToMove(t *testing.T) {
	st := movedFixture()
	out, moves, err := ApplyMoves(st, []config.Move{{From: "x/y", To: "x/z"}})
	if err != nil || moves != nil || out != st {
		t.Errorf("a move from an address not in the state should change nothing: %v %v", moves, err)
	}
}
