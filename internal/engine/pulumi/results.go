package pulumi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// snapshot is the part of an exported Pulumi deployment the engine reads.
type snapshot struct {
	Resources []snapResource `json:"resources"`
	Pending   []pendingOp    `json:"pending_operations"`
}

type snapResource struct {
	URN     string         `json:"urn"`
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Parent  string         `json:"parent"`
	Outputs map[string]any `json:"outputs"`
}

// pendingOp is an operation Pulumi started and never saw finish (its
// process was killed): "creating", "updating", "deleting" or "reading".
type pendingOp struct {
	Resource snapResource `json:"resource"`
	Type     string       `json:"type"`
}

func parseDeployment(raw json.RawMessage) (*snapshot, error) {
	var s snapshot
	if len(raw) == 0 {
		return &s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("read exported Pulumi deployment: %w", err)
	}
	return &s, nil
}

// collect turns the end of an up/destroy into one Result per step, from
// Pulumi's exported state (the same values a later refresh compares with).
// After a cancelled or killed run it first clears what Pulumi left behind:
// the stack's lock (`pulumi cancel`) and its pending operations, which are
// reported in the returned error, each by name with the command that
// resolves it, never dropped silently. Its commands survive Kill and are
// bounded by cleanupTimeout (docs/pulumi.md#cancellation). verb is the
// deployer command that runs the operation again ("deploy" or "destroy").
func (e *Engine) collect(ctx context.Context, st auto.Stack, steps []plan.Step, in engine.Inputs, started time.Time,
	opErr error, ev upEvents, done *finished, verb string,
) ([]engine.Result, error) {
	bg, cancel := context.WithTimeout(forCleanup(context.WithoutCancel(ctx)), cleanupTimeout)
	defer cancel()
	stopped := ctx.Err() != nil || e.wasKilled()
	if opErr != nil && !stopped {
		opErr = fmt.Errorf("pulumi: %w", shorten(opErr))
	} else if opErr != nil {
		opErr = shorten(opErr)
	}
	if e.wasKilled() {
		if _, err := repairLocalBackend(BackendFor(e.opts.BackendURL, in.Stack, in.Env)); err != nil {
			opErr = errors.Join(opErr, fmt.Errorf("repair the Pulumi backend after the kill: %w", err))
		}
	}
	if stopped {
		if err := st.Cancel(bg); err != nil {
			opErr = errors.Join(opErr, fmt.Errorf("release the Pulumi stack's lock (pulumi cancel): %w", shorten(err)))
		}
	}
	dep, snap, err := export(bg, st)
	if err != nil && bg.Err() == nil {
		dep, snap, err = export(bg, st) // once more: it is what tells which resources exist
	}
	if err != nil {
		opErr = errors.Join(opErr, fmt.Errorf("read Pulumi state after the %s: %w; deployer's state keeps what it had for the components of this run, and the next `deployer %s -e %s` brings both in line",
			verb, shorten(err), verb, in.Env))
		snap = nil
	}
	if snap != nil && len(snap.Pending) > 0 {
		opErr = errors.Join(opErr, clearPending(bg, st, dep, snap.Pending, steps, in.Env, verb))
	}
	failStatus := engine.StatusFailed
	if stopped {
		failStatus = engine.StatusCancelled
		if ctx.Err() != nil {
			opErr = errors.Join(context.Canceled, opErr)
		}
	}
	return results(steps, snap, done.snapshot(), started, time.Now(), opErr, failStatus, ev), opErr
}

// export reads Pulumi's state of st (`pulumi stack export`).
func export(ctx context.Context, st auto.Stack) (apitype.UntypedDeployment, *snapshot, error) {
	dep, err := st.Export(ctx)
	if err != nil {
		return dep, nil, err
	}
	snap, err := parseDeployment(dep.Deployment)
	return dep, snap, err
}

// cleanupTimeout bounds what collect runs after a cancelled or killed run
// (cancel, export, import), so the state is saved and the lock released
// well within the 30 s deployer allows after a second Ctrl-C.
const cleanupTimeout = 20 * time.Second

// clearPending removes the pending operations of a killed run from the
// stack (export, drop them, import: what `pulumi refresh
// --clear-pending-creates` does) and returns an error naming each one with
// its component and the command that resolves it: a pending create may have
// made a resource Pulumi no longer tracks.
func clearPending(ctx context.Context, st auto.Stack, dep apitype.UntypedDeployment, ops []pendingOp, steps []plan.Step, env, verb string) error {
	lines := make([]string, 0, len(ops))
	for _, op := range ops {
		what := op.Resource.URN
		if addr := ownerOf(op, steps); addr != "" {
			what = addr + " (" + op.Resource.URN + ")"
		}
		var line string
		switch op.Type {
		case "creating":
			line = fmt.Sprintf("%s: create pending: recorded by neither Pulumi nor deployer; the provider may have made it: look for it in the cloud and delete it (or adopt it with `pulumi import`); `deployer deploy -e %s` creates it again", what, env)
		case "updating":
			line = fmt.Sprintf("%s: update pending: recorded as it was before; `deployer deploy -e %s` applies the update again", what, env)
		case "deleting":
			line = fmt.Sprintf("%s: delete pending: still recorded; `deployer %s -e %s` deletes it again", what, verb, env)
		default:
			line = fmt.Sprintf("%s: %s pending; `deployer plan --refresh -e %s` reads it again", what, op.Type, env)
		}
		lines = append(lines, line)
	}
	msg := fmt.Sprintf("Pulumi was stopped with %d operations pending; deployer cleared them from Pulumi's state:\n  %s", len(ops), strings.Join(lines, "\n  "))
	var d map[string]json.RawMessage
	if err := json.Unmarshal(dep.Deployment, &d); err != nil {
		return fmt.Errorf("%s\n(clearing them failed: %w; run pulumi refresh --clear-pending-creates)", msg, err)
	}
	delete(d, "pending_operations")
	raw, err := json.Marshal(d)
	if err == nil {
		err = st.Import(ctx, apitype.UntypedDeployment{Version: dep.Version, Deployment: raw})
	}
	if err != nil {
		return fmt.Errorf("%s\n(clearing them failed: %w; run pulumi refresh --clear-pending-creates)", msg, shorten(err))
	}
	return errors.New(msg)
}

// ownerOf returns the address of the step whose component op is on: one
// of its resources or, in the previous layout, its wrapper (Pulumi records
// creating one too); "" when none.
func ownerOf(op pendingOp, steps []plan.Step) string {
	for _, s := range steps {
		o := ownerOfStep(s)
		if o.holds(op.Resource) || (isWrapper(op.Resource) && o.wrappers[urnName(op.Resource.URN)]) {
			return s.Address
		}
	}
	return ""
}

// results builds the Result of every step from Pulumi's state after the
// run; snap is nil when it could not be read. A component holds something
// when Pulumi's state has one of its resources (snapshot.held): only then
// does its Result carry Pulumi info, so deployer's state lists exactly what
// Pulumi holds (docs/pulumi.md#cancellation). A step succeeded when the
// whole operation did, or (after a failure) when the program recorded its
// component finished in this run (done: its value, finished.snapshot) and
// no step of its resources failed (ev.failed: the program learns the
// outputs of an import whose follow-up step Pulumi refused) or, for a
// delete, when it holds nothing. A step whose resource had an
// operation in flight when Pulumi was killed is "pending".
func results(steps []plan.Step, snap *snapshot, done map[string]any, started, finished time.Time,
	opErr error, failStatus engine.Status, ev upEvents,
) []engine.Result {
	out := make([]engine.Result, 0, len(steps))
	pending := map[string]bool{}
	if snap != nil {
		for _, op := range snap.Pending {
			pending[ownerOf(op, steps)] = true
		}
	}
	for _, s := range steps {
		r := engine.Result{Address: s.Address, Action: s.Action, Started: started, Finished: finished}
		if snap == nil {
			// Pulumi's state is unknown: nothing is claimed for the step.
			r.Status, r.Err = failStatus, opErr
			out = append(out, r)
			continue
		}
		kind, _ := Lookup(s.Kind)
		kids := snap.held(s)
		held := len(kids) > 0
		notDone := failStatus
		if pending[s.Address] {
			notDone = engine.StatusPending
		}
		if s.Action == plan.Delete {
			if !held || opErr == nil {
				r.Status = engine.StatusDeleted
			} else {
				r.Status, r.Err = notDone, opErr
				r.EngineData = heldInfo(kids).Data()
			}
			out = append(out, r)
			continue
		}
		var value map[string]any
		if raw, ok := done[s.Address]; ok && !anyFailed(kids, ev.failed) {
			value = componentValue(raw, kids)
		}
		switch {
		case value != nil:
			r.Status = engine.StatusReady
		case opErr == nil:
			r.Status, r.Err = engine.StatusFailed, fmt.Errorf("%s: Pulumi recorded no outputs for the component", s.Address)
		default:
			r.Status, r.Err = notDone, opErr
		}
		if held {
			heldResult(&r, kind, kids, value, ev.replaced)
		}
		out = append(out, r)
	}
	return out
}

// anyFailed reports whether a step of one of kids failed in the up.
func anyFailed(kids []snapResource, failed map[string]bool) bool {
	for _, k := range kids {
		if failed[k.URN] {
			return true
		}
	}
	return false
}

// heldResult completes r of a step whose component holds kids (a step
// not deleted): a replace when Pulumi replaced a resource of a component
// it did not create, the actual_state of its kind, and either the outputs
// and info of a finished component (fill) or what Pulumi holds now.
func heldResult(r *engine.Result, kind *Kind, kids []snapResource, value map[string]any, replaced map[string]bool) {
	for _, k := range kids {
		if replaced[k.URN] && r.Action != plan.Create {
			r.Action = plan.Replace
		}
	}
	if kind != nil {
		r.ActualState = actualFrom(kind, kids)
	}
	if r.Status == engine.StatusReady {
		fill(r, value, kids)
		return
	}
	// What Pulumi holds now, whatever its resources reached; the outputs
	// of a kind that cannot derive them stay as state recorded them.
	r.EngineData = heldInfo(kids).Data()
	if kind != nil && kind.OutputsFrom != nil {
		r.Outputs = kind.OutputsFrom(kids)
	}
}

// heldInfo is the Pulumi info of what a component holds: its only child's
// URN and id, or the URNs of its children; nil for none.
func heldInfo(kids []snapResource) *Info {
	switch {
	case len(kids) == 1:
		return &Info{URN: kids[0].URN, ID: kids[0].ID}
	case len(kids) > 1:
		info := &Info{}
		for _, k := range kids {
			info.URNs = append(info.URNs, k.URN)
		}
		return info
	}
	return nil
}

// fill copies outputs and the URNs/ids of a finished component into r;
// without an exported value the URNs come from its resources in Pulumi state.
func fill(r *engine.Result, value map[string]any, kids []snapResource) {
	if value != nil {
		r.Outputs = asMapOrNil(value["outputs"])
		if p, ok := value["pulumi"].(map[string]any); ok {
			info := &Info{}
			info.URN, _ = p["urn"].(string)
			info.ID, _ = p["id"].(string)
			if urns, ok := p["urns"].([]any); ok {
				for _, u := range urns {
					info.URNs = append(info.URNs, fmt.Sprint(u))
				}
			}
			if info.URN != "" || len(info.URNs) > 0 {
				r.EngineData = info.Data()
			}
			return
		}
	}
	r.EngineData = heldInfo(kids).Data()
}

func asMapOrNil(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// Drift is engine.Drift.
type Drift = engine.Drift

// drift compares each step's Prior.ActualState with the actual_state the
// kind derives from the refreshed children.
func drift(snap *snapshot, steps []plan.Step) []Drift {
	var out []Drift
	seen := map[string]bool{}
	for _, s := range steps {
		kind, ok := Lookup(s.Kind)
		if !ok || s.Prior == nil || seen[s.Address] {
			continue
		}
		seen[s.Address] = true
		actual := actualFrom(kind, snap.held(s))
		if actual == nil {
			out = append(out, Drift{Address: s.Address, Missing: true})
			continue
		}
		var fields []plan.FieldDiff
		for _, k := range unionKeys(s.Prior.ActualState, actual) {
			old, nw := s.Prior.ActualState[k], actual[k]
			if !equalJSON(old, nw) {
				fields = append(fields, plan.FieldDiff{Path: k, Old: old, New: nw, Op: "change"})
			}
		}
		if len(fields) > 0 {
			out = append(out, Drift{Address: s.Address, Fields: fields, ActualState: actual})
		}
	}
	return out
}

// actualFrom is a component's actual_state: the kind's Actual mapping
// applied to its children in Pulumi's state, cleaned (cleanValue). Apply and
// refresh both use it, so a refresh right after an apply finds no drift.
// It is nil when the component has no resources.
func actualFrom(kind *Kind, kids []snapResource) map[string]any {
	if len(kids) == 0 {
		return nil
	}
	if kind.Actual == nil {
		return cleanMap(kids[0].Outputs)
	}
	// Children are matched to roles by type token; roles of the same token
	// (none today) would need names.
	byToken := map[string]snapResource{}
	for _, k := range kids {
		byToken[k.Type] = k
	}
	m := map[string]any{}
	for _, f := range kind.Actual {
		k, ok := byToken[roleTokens[f.Role]]
		if !ok {
			continue
		}
		if f.Prop == "id" {
			m[f.Key] = k.ID
		} else {
			m[f.Key] = cleanValue(k.Outputs[f.Prop])
		}
	}
	return m
}

// roleTokens maps the roles used by the AWS kinds to their type tokens.
var roleTokens = map[string]string{
	"instance":         "aws:rds/instance:Instance",
	"replicationGroup": "aws:elasticache/replicationGroup:ReplicationGroup",
	"taskDefinition":   "aws:ecs/taskDefinition:TaskDefinition",
	"targetGroup":      "aws:lb/targetGroup:TargetGroup",
	"service":          "aws:ecs/service:Service",
	"scalingTarget":    "aws:appautoscaling/target:Target",
	"scalingPolicy":    "aws:appautoscaling/policy:Policy",
}

func unionKeys(a, b map[string]any) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return keys(set)
}

// equalJSON compares values as they would be after a JSON round trip
// (state holds float64 where Pulumi may hold int).
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
