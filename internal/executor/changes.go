package executor

import (
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Changes is what a run does to the state's components: a nil entry
// deletes the address.
type Changes struct {
	Resources map[string]*statestore.Resource
	Counts    statestore.ResourcesChanged
	// Replaced counts the updates that were replacements (counted in
	// Counts.Updated too: the state's counters have no replace).
	Replaced int
	// Deleted are the components whose delete ran, as history names
	// them (sorted by record).
	Deleted []string
	// Imported are the components the run imported, as history records
	// them (ImportedLine); not counted in Counts.
	Imported []string
}

// Changes turns the run's engine results for plan p into resource entries, each ready one
// with the resolved inputs it was applied with. Failed steps keep
// the previous entry marked failed (its desired_config unchanged, so the next
// plan retries); steps never started leave the state as it was. A replace
// across engines whose old instance is gone (run.Gone) and whose create
// failed leaves what the create made, marked failed, or nothing.
func (run Run) Changes(p *plan.Plan, now time.Time, depID string) Changes {
	steps := map[string]plan.Step{}
	for _, st := range p.Steps {
		steps[st.Address] = st
	}
	cs := Changes{Resources: map[string]*statestore.Resource{}}
	for _, r := range run.Results {
		st := steps[r.Address]
		switch r.Status {
		case engine.StatusDeleted:
			cs.Resources[r.Address] = nil
			cs.Counts.Deleted++
			cs.Deleted = append(cs.Deleted, r.Address)
		case engine.StatusReady:
			if st.Action == plan.NoOp && r.Action == plan.NoOp && st.MovedFrom != "" && st.Prior != nil {
				// Only moved: not counted as a change. A moved component
				// that was re-evaluated and updated (its inputs changed
				// with the move) is an update (r.Action), recorded below.
				cs.Resources[r.Address] = movedEntry(st, r)
				continue
			}
			res, replaced := readyEntry(st, r, run, now, depID)
			cs.Resources[r.Address] = res
			switch {
			case st.Action == plan.Import:
				cs.Imported = append(cs.Imported, ImportedLine(st)) // adopted, not created
			case st.Action == plan.Create:
				cs.Counts.Created++
			case replaced:
				cs.Counts.Updated++
				cs.Replaced++
			default:
				cs.Counts.Updated++
			}
		default: // failed, cancelled, pending
			res, keep := failedEntry(st, r, run, now)
			if !keep {
				continue
			}
			cs.Resources[r.Address] = res
			if res == nil {
				cs.Counts.Deleted++
			}
		}
	}
	return cs
}

// readyEntry is the state entry of step st that the engine applied (r),
// and whether it was replaced.
func readyEntry(st plan.Step, r engine.Result, run Run, now time.Time, depID string) (*statestore.Resource, bool) {
	res := &statestore.Resource{
		Kind: st.Kind, APIVersion: statestore.APIVersion, Status: statestore.ResourceReady,
		Lifecycle:     statestore.Lifecycle{CreatedAt: now, LastUpdated: now, Version: 1, Protect: st.Protect, ImportedID: importedID(st)},
		DesiredConfig: st.Config, ActualState: r.ActualState, Outputs: r.Outputs,
		EngineData: r.EngineData, Dependencies: st.DependsOn, Inputs: run.Inputs[r.Address],
		Health: &statestore.Health{Status: "healthy", LastCheck: &now},
		Deployment: &statestore.ResourceDeployment{
			LastDeploymentID: depID, LastDeploymentAt: now,
			LastDeploymentDurationSeconds: r.Finished.Sub(r.Started).Seconds(), RolloutStatus: "completed",
		},
	}
	if res.Dependencies == nil {
		res.Dependencies = []string{}
	}
	// The engine's action wins: Pulumi may replace what the plan saw
	// as an update.
	replaced := st.Action == plan.Replace || r.Action == plan.Replace
	if st.Prior != nil && !replaced {
		res.Lifecycle.CreatedAt = st.Prior.Lifecycle.CreatedAt
		res.Lifecycle.Version = st.Prior.Lifecycle.Version + 1
	}
	return res, replaced
}

// movedEntry is the state entry of a component a move brought to st's
// address and nothing else changed (docs/operations.md#moves): its entry
// as it was, lifecycle and last deployment included, with what the engine
// keeps of it now (a Pulumi component's URNs change with its address).
func movedEntry(st plan.Step, r engine.Result) *statestore.Resource {
	res := *st.Prior
	takeEngineResult(&res, r)
	return &res
}

// takeEngineResult overlays on res what the engine reported in r: its
// record, outputs and actual state, each where r has it.
func takeEngineResult(res *statestore.Resource, r engine.Result) {
	res.EngineData = reported(r.EngineData, res.EngineData)
	res.Outputs = reported(r.Outputs, res.Outputs)
	res.ActualState = reported(r.ActualState, res.ActualState)
}

// reported is what the engine reported (got), or prior where it reported
// nothing (nil).
func reported[T ~[]byte | ~map[string]any](got, prior T) T {
	if got != nil {
		return got
	}
	return prior
}

// failedEntry is the state entry of step st that failed, was cancelled or
// is pending (r): keep false leaves the state's entry as it was; a nil
// entry kept removes it (a replace across engines whose old instance is
// gone and whose create made nothing).
func failedEntry(st plan.Step, r engine.Result, run Run, now time.Time) (res *statestore.Resource, keep bool) {
	switch {
	case r.Gone:
		// The apply found it gone (its read printed null): the next
		// plan creates it, rather than retrying an update of nothing.
		return nil, true
	case st.Prior != nil && !run.Gone[r.Address]:
		prev := *st.Prior
		prev.Status = statestore.ResourceFailed
		prev.Lifecycle.LastUpdated = now
		if r.EngineData != nil {
			// What the engine holds now: an update may have
			// reached the cloud before the run stopped.
			takeEngineResult(&prev, r)
		}
		return &prev, true
	case r.EngineData != nil:
		// A create that did not finish but left resources (a
		// cancelled Pulumi update): recorded as failed, so the
		// state lists everything the engine has and the next
		// plan applies it again.
		return &statestore.Resource{
			Kind: st.Kind, APIVersion: statestore.APIVersion, Status: statestore.ResourceFailed,
			Lifecycle:     statestore.Lifecycle{CreatedAt: now, LastUpdated: now, Version: 1, ImportedID: importedID(st)},
			DesiredConfig: st.Config, ActualState: r.ActualState, Outputs: r.Outputs,
			EngineData: r.EngineData, Dependencies: nonNil(st.DependsOn),
		}, true
	case run.Gone[r.Address]:
		// A replace across engines deleted the existing
		// instance and created nothing: the state holds neither,
		// and the next plan creates it.
		return nil, true
	}
	return nil, false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// importedID is the id the state entry of st records as imported
// (lifecycle.imported_id, docs/operations.md#import): an Import step's
// id, else the one its entry already records, for the entry's life, so
// that the import: block that adopted it stays a no-op.
func importedID(st plan.Step) string {
	if st.Action == plan.Import {
		return st.ImportID
	}
	if st.Prior != nil {
		return st.Prior.Lifecycle.ImportedID
	}
	return ""
}

// ImportedLine is an imported component as history records it
// ("data/db (id db-42)").
func ImportedLine(st plan.Step) string {
	return fmt.Sprintf("%s (id %s)", st.Address, st.ImportID)
}
