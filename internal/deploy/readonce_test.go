package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/deploytest"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// countingBackend is the file state backend, counting its full reads
// (Read) and its version reads (ReadVersion); beforeVersion, when set, runs
// before the first version read, which a deploy makes under its lease.
type countingBackend struct {
	*filestate.Backend
	reads, versions atomic.Int32
	beforeVersion   func()
}

func (b *countingBackend) Read(ctx context.Context, stack, env string) ([]byte, statestore.Version, error) {
	b.reads.Add(1)
	return b.Backend.Read(ctx, stack, env)
}

func (b *countingBackend) ReadVersion(ctx context.Context, stack, env string) (statestore.Version, error) {
	if b.versions.Add(1) == 1 && b.beforeVersion != nil {
		b.beforeVersion()
	}
	return b.Backend.ReadVersion(ctx, stack, env)
}

var _ statestore.VersionReader = (*countingBackend)(nil)

// readOnce is one deploy of the diamond's root stack on a counting backend.
type readOnce struct {
	d     *deploytest.Diamond
	cfg   *config.Config
	back  *countingBackend
	store *statestore.Store
	svc   *Service
}

func newReadOnce(t *testing.T, d *deploytest.Diamond, opts ...statestore.Option) *readOnce {
	t.Helper()
	fb, err := filestate.New(d.Back)
	if err != nil {
		t.Fatal(err)
	}
	r := &readOnce{d: d, back: &countingBackend{Backend: fb}}
	r.store = statestore.New(r.back, opts...)
	r.svc = New(Deps{Deps: core.Deps{Store: r.store, Locks: d.Locks, Getenv: func(string) string { return "" }}, Engines: []engine.Engine{deploytest.Engine{J: d.J}}})
	for _, st := range d.Set.Stacks {
		if st.Name == "root" {
			r.cfg = st.Config
		}
	}
	return r
}

func (r *readOnce) deploy(t *testing.T) *Outcome {
	t.Helper()
	return r.deployChecked(t, nil)
}

func (r *readOnce) deployChecked(t *testing.T, check *PolicyCheck) *Outcome {
	t.Helper()
	out, err := r.svc.Apply(context.Background(), ApplyRequest{Config: r.cfg, Target: Target{Stack: "root", Env: "dev"}, Policy: check})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (r *readOnce) counts() [3]int {
	return [3]int{int(r.back.reads.Load()), int(r.svc.plansBuilt.Load()), int(r.back.versions.Load())}
}

// A deploy reads the state once and plans once before its lease; under the
// lease it reads only the state's version, and applies the plan it made
// when the version has not moved (docs/design.md#read-once-plan-once).
func TestADeployReadsTheStateOnceAndPlansOnce(t *testing.T) {
	d := deploytest.NewDiamond(t)
	p, err := secrets.NewProvider("passphrase", func(k string) string {
		if k == "DEPLOYER_SECRETS_PASSPHRASE" {
			return "correct horse battery staple"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	sealed := statestore.WithSealer(secrets.NewSealer(p, secrets.NewMasker()))
	for _, c := range []struct {
		name  string
		check *PolicyCheck
		opts  []statestore.Option
	}{
		{"first deploy (no state yet)", nil, nil},
		{"deploy of a stored state", nil, nil},
		{"deploy with policies", policyCheck(t, fmt.Sprintf(deploytest.DenyStacks, `{"other"}`)), nil}, // they check the same plan
		{"deploy with a secrets provider", nil, []statestore.Option{sealed}},                           // checked against the one read
	} {
		name := c.name
		r := newReadOnce(t, d, c.opts...)
		out := r.deployChecked(t, c.check)
		if c.check != nil && (out.Plan.Policy == nil || len(out.Plan.Policy.Results) != 1) {
			t.Errorf("%s: the plan applied carries no policy results: %+v", name, out.Plan.Policy)
		}
		if got, want := r.counts(), [3]int{1, 1, 1}; got != want {
			t.Errorf("%s: %d full reads, %d plans, %d version reads; want %d, %d, %d", name, got[0], got[1], got[2], want[0], want[1], want[2])
		}
	}
	d.NoLocksLeft()
}

// When another writer moves the state between the plan and the lease, the
// deploy reads it again and plans again under the lease: the plan applied
// is never one made against a state that moved, and the save builds on
// the other writer's serial.
func TestADeployPlansAgainWhenTheStateMovedBeforeItsLease(t *testing.T) {
	d := deploytest.NewDiamond(t)
	newReadOnce(t, d).deploy(t) // serial 1
	// A change, so that the deploy writes.
	y := fmt.Sprintf("stack: root\nbackend: {state: file://%s, lock: file://%s}\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: \"echo changed\", delete: \"true\"}\n", d.Back, d.Back)
	if err := os.WriteFile(filepath.Join(d.Root, "root", "deployer.yaml"), []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	r := newReadOnce(t, d)
	var moved statestore.Head
	r.back.beforeVersion = func() {
		other := statestore.New(r.back.Backend)
		st, head, err := other.Load(context.Background(), "root", "dev")
		if err != nil {
			t.Error(err)
			return
		}
		st.Serial++
		st.DeploymentHistory = append([]statestore.Deployment{{DeploymentID: "dep-other", Type: "deploy", Status: "success", Serial: st.Serial}}, st.DeploymentHistory...)
		if moved, err = other.Save(context.Background(), st, head, nil); err != nil {
			t.Error(err)
		}
	}
	out := r.deploy(t)
	if got, want := r.counts(), [3]int{2, 2, 1}; got != want {
		t.Errorf("%d full reads, %d plans, %d version reads; want %d, %d, %d", got[0], got[1], got[2], want[0], want[1], want[2])
	}
	if moved.Serial != 2 || out.Head.Serial != moved.Serial+1 || out.Head.Lineage != moved.Lineage {
		t.Errorf("saved serial %d (lineage %s) after the other writer's %d (%s): want the next serial of the same lineage",
			out.Head.Serial, out.Head.Lineage, moved.Serial, moved.Lineage)
	}
	st, _, err := r.store.Load(context.Background(), "root", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(st.DeploymentHistory, func(dep statestore.Deployment) bool { return dep.DeploymentID == "dep-other" }) {
		t.Errorf("the deploy's state lost the other writer's deployment record: %+v", st.DeploymentHistory)
	}
	d.NoLocksLeft()
}
