// Package deploytest is the fixture the tests of the use cases and of the
// many-stacks runner share: five stacks on file backends (root, left and
// right reading root, leaf reading both, alone) and an engine that
// journals each stack's engine call, in the order they happen.
package deploytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/command"
	"github.com/deployer-dev/deployer/internal/engine/stackref"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// journal records the start and end of every stack's engine call, in the
// order they happen: a logical clock, no wall time.
type Journal struct {
	mu     sync.Mutex
	Events []string // "start:left", "end:left"
	// meet makes the named stacks wait in their engine call until all of
	// them are inside it: the run can only finish if they overlap.
	Meet map[string]*Meeting
	Fail map[string]bool
	// block, when set, is closed by the test; stacks in blocked wait for
	// it (or for their context).
	Block   chan struct{}
	Blocked map[string]bool
	Started chan string
}

type Meeting struct {
	N       int
	arrived int
	All     chan struct{}
}

func (j *Journal) Add(ev string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.Events = append(j.Events, ev)
	return len(j.Events) - 1
}

func (j *Journal) At(ev string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Index(j.Events, ev)
}

// Engine is a Command engine stand-in that writes to the journal.
type Engine struct {
	engine.Engine
	J *Journal
}

func (e Engine) Name() string { return "rec" }
func (e Engine) Kinds() []engine.Kind {
	return []engine.Kind{{Name: command.Kind, Settings: plan.KindSettings{Recorded: func(r *statestore.Resource) (map[string]map[string]any, bool) {
		m, ok := r.ActualState["settings"].(map[string]any) // as loaded from the state file
		out := map[string]map[string]any{}
		for k, v := range m {
			out[k], _ = v.(map[string]any)
		}
		return out, ok
	}}}}
}
func (e Engine) Handles(k string) bool                                    { return k == command.Kind || k == stackref.Kind }
func (e Engine) Preflight(context.Context, engine.PreflightRequest) error { return nil }
func (e Engine) Kill()                                                    {}
func (e Engine) Capabilities() engine.Capabilities                        { return engine.Capabilities{} }
func (e Engine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	rs, err := e.run(ctx, req.Steps, req.Inputs, "ready")
	return engine.ApplyResponse{Results: rs}, err
}
func (e Engine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	rs, err := e.run(ctx, req.Steps, req.Inputs, "deleted")
	return engine.DestroyResponse{Results: rs}, err
}

func (e Engine) run(ctx context.Context, steps []plan.Step, in engine.Inputs, status engine.Status) ([]engine.Result, error) {
	results := func(status engine.Status, err error) []engine.Result {
		var out []engine.Result
		for _, s := range steps {
			out = append(out, engine.Result{Address: s.Address, Action: s.Action, Status: status, Err: err, Outputs: map[string]any{"v": 1},
				ActualState: map[string]any{"settings": s.Settings}})
		}
		return out
	}
	if !slices.ContainsFunc(steps, func(s plan.Step) bool { return s.Kind == command.Kind }) {
		return results(status, nil), nil
	}
	j := e.J
	j.Add("start:" + in.Stack)
	if j.Started != nil {
		j.Started <- in.Stack
	}
	defer j.Add("end:" + in.Stack)
	j.mu.Lock()
	m := j.Meet[in.Stack]
	if m != nil {
		if m.arrived++; m.arrived == m.N {
			close(m.All)
		}
	}
	j.mu.Unlock()
	if m != nil {
		<-m.All
	}
	if j.Blocked[in.Stack] {
		select {
		case <-j.Block:
		case <-ctx.Done():
			return results("cancelled", ctx.Err()), ctx.Err()
		}
	}
	if j.Fail[in.Stack] {
		err := fmt.Errorf("exit status 1")
		return results("failed", err), err
	}
	return results(status, nil), nil
}

// Diamond is root -> left, right -> leaf plus alone, sharing file backends.
type Diamond struct {
	T     *testing.T
	Root  string // the repository of the stacks
	Back  string // the directory of the file lock and state backends
	Set   *stacks.Set
	J     *Journal
	Locks *lockmgr.Manager
}

// NewDiamond writes the five stacks under a temporary directory, discovers
// them and opens the lock backend.
func NewDiamond(t *testing.T) *Diamond {
	t.Helper()
	d := &Diamond{T: t, Root: t.TempDir(), J: &Journal{Meet: map[string]*Meeting{}, Fail: map[string]bool{}, Blocked: map[string]bool{}}}
	d.Back = filepath.Join(d.Root, ".deployer")
	for name, refs := range map[string][]string{"root": nil, "left": {"root"}, "right": {"root"}, "leaf": {"left", "right"}, "alone": nil} {
		y := fmt.Sprintf("stack: %s\nbackend: {state: file://%s, lock: file://%s}\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: \"true\", delete: \"true\"}\n", name, d.Back, d.Back)
		for _, r := range refs {
			y += fmt.Sprintf("      from-%s:\n        kind: StackReference\n        config: {stack: %s}\n", r, r)
		}
		if err := os.MkdirAll(filepath.Join(d.Root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.Root, name, "deployer.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.Reload()
	lb, err := filelock.New(d.Back)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	d.Locks = lockmgr.NewManager(lb, lockmgr.Options{})
	return d
}

// Reload discovers the stacks again (after a deployer.yaml changed).
func (d *Diamond) Reload() {
	d.T.Helper()
	set, err := stacks.Discover(d.Root, stacks.Options{Env: "dev", Load: func(p string) (*config.Config, error) { return config.Load(p) }})
	if err != nil {
		d.T.Fatal(err)
	}
	d.Set = set
}

// NoLocksLeft fails the test when a lock is still held.
func (d *Diamond) NoLocksLeft() {
	d.T.Helper()
	recs, err := d.Locks.List(context.Background(), "")
	if err != nil {
		d.T.Fatal(err)
	}
	if len(recs) != 0 {
		d.T.Errorf("locks left: %+v", recs)
	}
}

// DenyStacks is a policy that denies every plan of the stacks it names:
// fmt.Sprintf(DenyStacks, `{"left"}`).
const DenyStacks = `package deployer.frozen

deny contains msg if {
	input.stack in %s
	msg := sprintf("%%s is frozen", [input.stack])
}
`

// PolicyDir writes rego as the one policy file of a new directory and
// returns the directory (PolicyCheck.Dirs).
func PolicyDir(t *testing.T, rego string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
