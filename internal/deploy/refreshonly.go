package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RefreshOnlyRequest is one `deploy --refresh-only` or `plan
// --refresh-only` (docs/operations.md#refresh-only).
type RefreshOnlyRequest struct {
	Config *config.Config
	Target Target
	// Record says the drift found is recorded as the new actual state once
	// confirmed (deploy --refresh-only), under the target's lock. Without
	// it (plan --refresh-only) no lock is taken and nothing is written.
	Record      bool
	LockTimeout time.Duration
	// ShowPlan renders what the refresh found before confirmation (nil:
	// not shown).
	ShowPlan func(*RefreshPlan) error
	// Confirm asks the user; nil means --yes.
	Confirm func(*RefreshPlan) (bool, error)
}

// RefreshPlan is what a refresh-only found: the plan it shows and, on
// approval, records.
type RefreshPlan struct {
	Stack       string `json:"stack"`
	Environment string `json:"environment"`
	// Drift are the components whose live state differs from their
	// actual_state (Missing: gone), secret values masked.
	Drift []engine.Drift `json:"drift"`
	// Skipped are the components in scope with state that no engine can
	// read (a Command component without command.read): left as recorded.
	Skipped []string `json:"skipped"`
	// Pending says deployer.yaml has changes a deploy would apply, which a
	// refresh-only leaves alone.
	Pending bool `json:"config_changes_pending"`
}

// HasChanges reports whether recording the refresh changes the state.
func (p *RefreshPlan) HasChanges() bool { return len(p.Drift) > 0 }

// RefreshOutcome is what a refresh-only did.
type RefreshOutcome struct {
	Plan       *RefreshPlan
	Deployment statestore.Deployment // zero when nothing was recorded
	Head       statestore.Head
}

// RefreshType is the history type of a refresh-only's deployment record.
const RefreshType = "refresh"

// RefreshOnly reads the live state of every component in scope that an
// engine can read (engine.Engine.Refresh) and shows how it differs from
// the state's actual_state (req.ShowPlan). With req.Record, under the
// target's lease, it then asks (req.Confirm) and records exactly what it
// showed as a new serial of history type refresh: the drifted components'
// actual_state replaced, the gone ones removed from the state. Nothing
// else runs: no create, update or delete. No drift writes nothing.
// Errors: the engines' (a failing read names its component), the lock's
// and the state store's, ErrDeclined.
func (s *Service) RefreshOnly(ctx context.Context, req RefreshOnlyRequest) (_ *RefreshOutcome, err error) {
	pr, err := s.prepare(ctx, req.Config, req.Target, true)
	if err != nil {
		return nil, err
	}
	if !req.Record {
		rp, _, _, err := s.refreshPlan(ctx, pr)
		if err != nil {
			return nil, err
		}
		return &RefreshOutcome{Plan: rp}, req.show(rp)
	}
	if err := s.c.CheckSecrets(ctx, pr.t, pr.secrets); err != nil {
		return nil, err
	}
	if err := s.c.RefuseErrored(pr.t); err != nil {
		return nil, err
	}
	id := core.NewDeploymentID()
	commit, branch := s.c.GitInfo(pr.cfg.Dir)
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: pr.t.LockKey(), Op: lockmgr.OpRefresh, DeploymentID: id,
		GitCommit: commit, GitBranch: branch, Timeout: req.LockTimeout, Announce: true})
	if err != nil {
		return nil, err
	}
	defer lease.ReleaseInto(&err)
	lctx := lease.Context()
	start := s.c.Now()
	rp, raw, pl, err := s.refreshPlan(lctx, pr)
	if err != nil {
		return nil, err
	}
	out := &RefreshOutcome{Plan: rp}
	if err := req.show(rp); err != nil || !rp.HasChanges() {
		return out, err
	}
	if req.Confirm != nil {
		ok, err := req.Confirm(rp)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, ErrDeclined
		}
	}
	cs := refreshChanges(pl.st, raw)
	for name, ref := range pr.res.Outputs {
		if r, ok := cs.Resources[ref.Address]; ok && r == nil {
			// Its component is gone from the state: so is its value
			// (docs/operations.md#refresh-only).
			cs.DropOutputs = append(cs.DropOutputs, name)
		}
	}
	slices.Sort(cs.DropOutputs)
	now := s.c.Now().UTC()
	out.Deployment = statestore.Deployment{DeploymentID: id, Type: RefreshType, Timestamp: now, TriggeredBy: lease.By,
		GitCommit: commit, Status: statestore.DeploymentSuccess, DurationSeconds: now.Sub(start.UTC()).Seconds(),
		ResourcesChanged: cs.Counts, Scope: lease.Record().LockKey, Removed: removedBy(cs)}
	out.Head, err = s.c.Save(lctx, lease, pr.t, pl.st, pl.head, cs, out.Deployment, commit, branch)
	if err != nil {
		return out, err
	}
	out.Deployment.Serial = out.Head.Serial
	s.c.Audit.Info("state.refreshed", "stack", pr.t.Stack, "environment", pr.t.Env, "serial", out.Head.Serial,
		"deployment_id", id, "updated", cs.Counts.Updated, "removed", strings.Join(removedBy(cs), ","), "by", lease.By,
		"lock_id", lease.Record().LockID)
	return out, nil
}

func (r RefreshOnlyRequest) show(p *RefreshPlan) error {
	if r.ShowPlan == nil {
		return nil
	}
	return r.ShowPlan(p)
}

// refreshPlan plans pr (to know what has state and what deployer.yaml
// would change), reads what is live and returns the plan to show, the
// drift unmasked (what is recorded) and the plan it was made from.
func (s *Service) refreshPlan(ctx context.Context, pr *prepared) (*RefreshPlan, []engine.Drift, *planned, error) {
	pl, err := s.planFor(ctx, pr, false, nil, false)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, st := range pl.plan.Steps {
		if st.MovedFrom != "" {
			return nil, nil, nil, fmt.Errorf("deployer.yaml moves %s to %s: a refresh-only records no moves; deploy the move first (docs/operations.md#moves)",
				st.MovedFrom, st.Address)
		}
	}
	raw, read, err := s.readLive(ctx, pr, pl.plan)
	if errors.Is(err, ErrNothingToRefresh) {
		raw, read, err = nil, map[string]bool{}, nil // every component is listed as skipped
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rp := &RefreshPlan{Stack: pr.t.Stack, Environment: pr.t.Env, Drift: maskedCopy(raw), Skipped: []string{},
		Pending: pl.plan.HasChanges()}
	for _, st := range pl.plan.Steps {
		if st.Prior != nil && !read[st.Address] && !slices.Contains(rp.Skipped, st.Address) {
			rp.Skipped = append(rp.Skipped, st.Address)
		}
	}
	slices.Sort(rp.Skipped)
	if rp.Drift == nil {
		rp.Drift = []engine.Drift{}
	}
	return rp, raw, pl, nil
}

// maskedCopy is a copy of drift with its secret values masked (maskDrift);
// drift is left as it is.
func maskedCopy(drift []engine.Drift) []engine.Drift {
	out := make([]engine.Drift, len(drift))
	for i, d := range drift {
		d.Fields = slices.Clone(d.Fields)
		out[i] = d
	}
	maskDrift(out)
	return out
}

// refreshChanges is the change set that records drift in st: a drifted
// component's entry as it was with the actual_state read, a gone one
// removed from the state.
func refreshChanges(st *statestore.State, drift []engine.Drift) core.ChangeSet {
	cs := core.ChangeSet{Changes: executor.Changes{Resources: map[string]*statestore.Resource{}}}
	for _, d := range drift {
		prior := st.Resources[d.Address]
		if prior == nil {
			continue
		}
		if d.Missing {
			cs.Resources[d.Address] = nil
			cs.Counts.Deleted++
			continue
		}
		r := *prior
		r.ActualState = maps.Clone(d.ActualState)
		cs.Resources[d.Address] = &r
		cs.Counts.Updated++
	}
	return cs
}

// removedBy are the addresses cs removes from the state, sorted.
func removedBy(cs core.ChangeSet) []string {
	var out []string
	for addr, r := range cs.Resources {
		if r == nil {
			out = append(out, addr)
		}
	}
	slices.Sort(out)
	return out
}

// rereadChanged reads again, with its new settings (engine.Engine.Refresh),
// every component of p that an update changes a setting of its kind's
// RereadOn (command.read) on, and sets the step's Reread (what the apply
// records) and Drift (what differs from actual_state, masked): a new read
// command never accepts drift unseen (docs/operations.md#refresh-only).
// A read that says the component is gone shows as such and leaves
// Reread nil: the apply reads again and drops it.
func (s *Service) rereadChanged(ctx context.Context, pr *prepared, p *plan.Plan) error {
	kinds := KindsOf(s.d.Engines)
	var idx []int
	for i, st := range p.Steps {
		on := kinds[st.Kind].RereadOn
		if st.Action == plan.Update && st.Prior != nil && slices.ContainsFunc(st.Diffs, func(f plan.FieldDiff) bool { return slices.Contains(on, f.Path) }) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	in, _, err := s.inputs(ctx, pr)
	if err != nil {
		return err
	}
	for _, i := range idx {
		st := &p.Steps[i]
		eng, err := s.x.EngineFor(st.Kind)
		if err != nil {
			return err
		}
		resp, err := eng.Refresh(ctx, engine.RefreshRequest{Steps: []plan.Step{*st}, Inputs: in})
		if errors.Is(err, engine.ErrNotSupported) {
			continue // the read was removed: nothing to read
		}
		if err != nil {
			return err
		}
		if len(resp.Drift) == 0 {
			st.Reread = maps.Clone(st.Prior.ActualState)
			continue
		}
		if d := resp.Drift[0]; d.Missing {
			st.Drift = []plan.FieldDiff{{Path: "(live)", Op: plan.OpRemove, Old: "recorded", New: "gone: the deploy drops it from the state"}}
			continue
		}
		st.Reread = resp.Drift[0].ActualState
		st.Drift = maskedCopy(resp.Drift)[0].Fields
	}
	return nil
}
