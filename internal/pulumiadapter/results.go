package pulumiadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// snapshot is the part of an exported Pulumi deployment the engine reads.
type snapshot struct {
	Resources []snapResource `json:"resources"`
}

type snapResource struct {
	URN     string         `json:"urn"`
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Parent  string         `json:"parent"`
	Outputs map[string]any `json:"outputs"`
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

// component returns the component resource of address, or nil.
func (s *snapshot) component(address string) *snapResource {
	name := "::" + Component{Address: address}.Name()
	for i := range s.Resources {
		r := &s.Resources[i]
		if strings.HasPrefix(r.Type, ComponentType) && strings.HasSuffix(r.URN, name) {
			return r
		}
	}
	return nil
}

// children returns the resources whose parent is urn, sorted by URN.
func (s *snapshot) children(urn string) []snapResource {
	var out []snapResource
	for _, r := range s.Resources {
		if r.Parent == urn {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URN < out[j].URN })
	return out
}

// collect turns the end of an up/destroy into one Result per step, from the
// stack outputs on success and from Pulumi's exported state otherwise.
func (e *Engine) collect(ctx context.Context, st auto.Stack, steps []plan.Step, deploymentID string, started time.Time, opErr error) ([]engine.Result, error) {
	bg := context.WithoutCancel(ctx)
	var snap *snapshot
	dep, err := st.Export(bg)
	if err == nil {
		snap, err = parseDeployment(dep.Deployment)
	}
	if err != nil && opErr == nil {
		opErr = fmt.Errorf("read Pulumi state after the update: %w", err)
	}
	if snap == nil {
		snap = &snapshot{}
	}
	var outs auto.OutputMap
	if opErr == nil {
		if outs, err = st.Outputs(bg); err != nil {
			opErr = fmt.Errorf("read Pulumi stack outputs: %w", err)
		}
	}
	failStatus := "failed"
	if ctx.Err() != nil {
		failStatus = "cancelled"
		if opErr == nil {
			opErr = ctx.Err()
		}
	} else if opErr != nil {
		opErr = fmt.Errorf("pulumi: %w", opErr)
	}
	return results(steps, snap, outs, deploymentID, started, time.Now(), opErr, failStatus), opErr
}

// results builds the Result of every step. A step succeeded when the whole
// operation did, or (after a failure) when its component recorded outputs in
// this run (deployment_id) or, for a delete, when it is gone.
func results(steps []plan.Step, snap *snapshot, outs auto.OutputMap, deploymentID string, started, finished time.Time,
	opErr error, failStatus string,
) []engine.Result {
	out := make([]engine.Result, 0, len(steps))
	for _, s := range steps {
		r := engine.Result{Address: s.Address, Action: s.Action, Started: started, Finished: finished}
		comp := snap.component(s.Address)
		if s.Action == plan.Delete {
			if comp == nil || opErr == nil {
				r.Status = "deleted"
			} else {
				r.Status, r.Err = failStatus, opErr
			}
			out = append(out, r)
			continue
		}
		var value map[string]any
		if ov, ok := outs[s.Address]; ok && opErr == nil {
			value, _ = ov.Value.(map[string]any)
		} else if comp != nil {
			value, _ = comp.Outputs["deployer"].(map[string]any)
		}
		switch {
		case opErr == nil && value != nil:
			r.Status = "ready"
		case opErr == nil:
			r.Status, r.Err = "failed", fmt.Errorf("%s: Pulumi reported no outputs for the component", s.Address)
		case comp != nil && value != nil && deploymentID != "" && comp.Outputs["deployment_id"] == deploymentID:
			r.Status = "ready"
		default:
			r.Status, r.Err = failStatus, opErr
		}
		fill(&r, value, comp, snap)
		out = append(out, r)
	}
	return out
}

// fill copies outputs, actual_state and the URNs/ids into r; without an
// exported value the URNs come from the component's children in Pulumi state.
func fill(r *engine.Result, value map[string]any, comp *snapResource, snap *snapshot) {
	if value != nil {
		r.Outputs, _ = value["outputs"].(map[string]any)
		r.ActualState, _ = value["actual_state"].(map[string]any)
		if p, ok := value["pulumi"].(map[string]any); ok {
			info := &statestore.PulumiInfo{}
			info.URN, _ = p["urn"].(string)
			info.ID, _ = p["id"].(string)
			if urns, ok := p["urns"].([]any); ok {
				for _, u := range urns {
					info.URNs = append(info.URNs, fmt.Sprint(u))
				}
			}
			r.Pulumi = info
			return
		}
	}
	if comp == nil {
		return
	}
	kids := snap.children(comp.URN)
	switch {
	case len(kids) == 1:
		r.Pulumi = &statestore.PulumiInfo{URN: kids[0].URN, ID: kids[0].ID}
	case len(kids) > 1:
		r.Pulumi = &statestore.PulumiInfo{}
		for _, k := range kids {
			r.Pulumi.URNs = append(r.Pulumi.URNs, k.URN)
		}
	}
}

// Drift is one component whose actual_state in deployer's state differs from
// what `pulumi refresh` found in the cloud.
type Drift struct {
	Address string `json:"address"`
	// Missing is true when the component's resources no longer exist.
	Missing bool `json:"missing,omitempty"`
	// Fields are the differing actual_state keys: Old from state, New from the cloud.
	Fields []plan.FieldDiff `json:"fields,omitempty"`
	// ActualState is the refreshed actual_state, to record if wanted.
	ActualState map[string]any `json:"actual_state,omitempty"`
}

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
		comp := snap.component(s.Address)
		if comp == nil {
			out = append(out, Drift{Address: s.Address, Missing: true})
			continue
		}
		actual := refreshedActual(kind, comp, snap)
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

// refreshedActual applies the kind's Actual mapping to the refreshed children.
func refreshedActual(kind *Kind, comp *snapResource, snap *snapshot) map[string]any {
	kids := snap.children(comp.URN)
	if len(kids) == 0 {
		return nil
	}
	if kind.Actual == nil {
		return kids[0].Outputs
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
			m[f.Key] = k.Outputs[f.Prop]
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
