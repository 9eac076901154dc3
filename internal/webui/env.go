package webui

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/plan"
)

// envView is the page of one stack/environment: its components and its
// history, as `state show` and `history` show them.
type envView struct {
	Stack, Env           string
	StateErr, HistoryErr string
	Serial               int64
	Updated, UpdatedBy   string
	Components           []componentRow
	Outputs              []outputRow
	Failure              string
	NotCreated           []string
	History              []historyRow
}

type componentRow struct {
	Address, Kind, Status, Updated string
	Version                        int
	Outputs                        []outputRow
}

// outputRow is one output; a secret one has Value "(sensitive)".
type outputRow struct{ Name, Value string }

type historyRow struct {
	Serial                                     int64
	Time, Type, Status, Deployment, By, Commit string
	Duration, Changes, Error                   string
	Failed                                     bool
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// fillState puts the state of res into v, every secret (sealed values,
// secret-named keys) shown as (sensitive) by plan.Mask before the masker.
func (s *Server) fillState(v *envView, res *stateops.ShowStateResult) {
	st := res.State
	v.Serial = st.Serial
	v.Updated = st.Metadata.LastUpdated.UTC().Format(time.RFC3339)
	v.UpdatedBy = s.text(st.Metadata.LastUpdatedBy)
	for _, addr := range sortedKeys(st.Resources) {
		r := st.Resources[addr]
		v.Components = append(v.Components, componentRow{Address: s.text(addr), Kind: s.text(r.Kind),
			Status: s.text(string(r.Status)), Updated: r.Lifecycle.LastUpdated.UTC().Format(time.RFC3339),
			Version: r.Lifecycle.Version, Outputs: s.outputs(r.Outputs)})
	}
	v.Outputs = s.outputs(st.Outputs)
	if f := res.Failure; f != nil {
		v.Failure = s.lines(f.Deployment.Error)
		for _, a := range f.NotCreated {
			v.NotCreated = append(v.NotCreated, s.text(a))
		}
	}
}

func (s *Server) outputs(m map[string]any) []outputRow {
	masked, _ := plan.Mask(maps.Clone(m)).(map[string]any)
	var out []outputRow
	for _, k := range sortedKeys(masked) {
		val := masked[k]
		text, ok := val.(string)
		if !ok {
			b, _ := json.Marshal(val)
			text = string(b)
		}
		out = append(out, outputRow{Name: s.text(k), Value: s.text(text)})
	}
	return out
}

func (s *Server) historyRow(e stateops.HistoryEntry) historyRow {
	h := historyRow{Serial: e.Serial, Time: e.Time.UTC().Format(time.RFC3339), Type: s.text(e.Type), Status: s.text(string(e.Status)),
		Deployment: s.text(e.DeploymentID), By: s.text(e.TriggeredBy), Duration: fmt.Sprintf("%.1fs", e.Duration),
		Error: s.lines(e.Error), Failed: e.Error != ""}
	commit := e.GitCommit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	h.Commit = orDash(s.text(commit))
	h.Deployment, h.By = orDash(h.Deployment), orDash(h.By)
	var ch []string
	if e.Changed != nil {
		ch = append(ch, fmt.Sprintf("+%d ~%d -%d", e.Changed.Created, e.Changed.Updated, max(0, e.Changed.Deleted-len(e.Removed))))
	}
	for _, part := range []struct {
		verb string
		list []string
	}{{"deleted", e.Deleted}, {"moved", e.Moved}, {"forgot", e.Removed}, {"imported", e.Imported}} {
		if len(part.list) > 0 {
			ch = append(ch, part.verb+" "+strings.Join(part.list, ", "))
		}
	}
	if e.RestoredFrom > 0 {
		ch = append(ch, fmt.Sprintf("restored from %d", e.RestoredFrom))
	}
	h.Changes = s.text(strings.Join(ch, "; "))
	return h
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
