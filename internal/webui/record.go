package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// recordView is the page of one history record: the deployments that
// wrote serial N and what changed from the snapshot of N-1, field by field.
type recordView struct {
	Stack, Env  string
	Serial      int64
	Err         string
	PrevErr     string
	Deployments []deploymentView
	Changes     []componentChange
	Unchanged   int
}

type deploymentView struct {
	ID, Type, Status, By, When, Commit, Version, Scope, Run, Duration, Error string
	Failed                                                                   bool
	Overrides                                                                []overrideView
	Lists                                                                    []outputRow // moved, imported, forgot, deleted
}

type overrideView struct{ Policy, Reason, By, Denies string }

// componentChange is one component added, removed or changed by the
// record: its field diffs (config and outputs), secrets as (sensitive).
type componentChange struct {
	Address, Op string
	Fields      []fieldView
}

type fieldView struct{ Path, Op, Old, New string }

func (s *Server) recordPage(w http.ResponseWriter, r *http.Request) {
	stack, env := r.PathValue("stack"), r.PathValue("env")
	for _, n := range []struct{ what, v string }{{"stack", stack}, {"environment", env}} {
		if err := config.ValidateName(n.what, n.v); err != nil {
			s.fail(w, http.StatusBadRequest, "stacks", err)
			return
		}
	}
	serial, err := strconv.ParseInt(r.PathValue("serial"), 10, 64)
	if err != nil || serial < 1 {
		s.fail(w, http.StatusBadRequest, "stacks", fmt.Errorf("serial %q: want a positive number (a row of the history)", r.PathValue("serial")))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	v := recordView{Stack: s.text(stack), Env: s.text(env), Serial: serial}
	cur, err := s.cfg.State(ctx, stack, env, serial)
	if err != nil {
		v.Err = s.text(err.Error())
		s.render(w, http.StatusNotFound, "record.html", page{Title: fmt.Sprintf("%s/%s serial %d", v.Stack, v.Env, serial), Nav: "stacks", Body: v})
		return
	}
	for _, d := range cur.State.DeploymentHistory {
		if d.Serial == serial {
			v.Deployments = append(v.Deployments, s.deploymentView(d))
		}
	}
	var prev *statestore.State
	if serial > 1 {
		p, err := s.cfg.State(ctx, stack, env, serial-1)
		switch {
		case err == nil:
			prev = p.State
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			v.PrevErr = s.text(err.Error())
		default:
			v.PrevErr = s.text(fmt.Sprintf("serial %d: %v", serial-1, err))
		}
	}
	v.Changes, v.Unchanged = s.changes(prev, cur.State)
	s.render(w, http.StatusOK, "record.html", page{Title: fmt.Sprintf("%s/%s serial %d", v.Stack, v.Env, serial), Nav: "stacks", Body: v})
}

func (s *Server) deploymentView(d statestore.Deployment) deploymentView {
	dv := deploymentView{ID: orDash(s.text(d.DeploymentID)), Type: orDash(s.text(d.Type)), Status: s.text(string(d.Status)),
		By: orDash(s.text(d.TriggeredBy)), When: d.Timestamp.UTC().Format(time.RFC3339), Commit: orDash(s.text(d.GitCommit)),
		Version: s.text(d.Version), Scope: s.text(d.Scope), Duration: fmt.Sprintf("%.1fs", d.DurationSeconds),
		Error: s.lines(d.Error), Failed: d.Error != ""}
	if d.RunID != "" {
		dv.Run = s.text(fmt.Sprintf("%s (attempt %d)", d.RunID, d.RunAttempt))
	}
	for _, o := range d.PolicyOverrides {
		dv.Overrides = append(dv.Overrides, overrideView{Policy: s.text(o.Policy), Reason: s.text(o.Reason), By: s.text(o.By), Denies: s.text(strings.Join(o.Denies, "; "))})
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"moved", d.Moved}, {"imported", d.Imported}, {"forgot", d.Removed}, {"deleted", d.Deleted}} {
		if len(l.list) > 0 {
			dv.Lists = append(dv.Lists, outputRow{Name: l.name, Value: s.text(strings.Join(l.list, ", "))})
		}
	}
	return dv
}

// changes compares the components of prev (nil: none) and cur: desired
// config and outputs, field by field, every diff masked (plan.MaskDiff).
func (s *Server) changes(prev, cur *statestore.State) ([]componentChange, int) {
	var out []componentChange
	unchanged := 0
	old := map[string]*statestore.Resource{}
	if prev != nil {
		old = prev.Resources
	}
	addrs := map[string]bool{}
	for a := range old {
		addrs[a] = true
	}
	for a := range cur.Resources {
		addrs[a] = true
	}
	for _, a := range sortedKeys(addrs) {
		o, n := old[a], cur.Resources[a]
		c := componentChange{Address: s.text(a)}
		switch {
		case o == nil:
			c.Op = "added"
		case n == nil:
			c.Op = "removed"
		default:
			c.Op = "changed"
		}
		for _, part := range []struct {
			prefix   string
			old, new map[string]any
		}{{"config.", cfgOf(o), cfgOf(n)}, {"outputs.", outOf(o), outOf(n)}} {
			for _, f := range plan.FieldDiffs(part.old, part.new) {
				f = plan.MaskDiff(f)
				c.Fields = append(c.Fields, fieldView{Path: s.text(part.prefix + f.Path), Op: f.Op, Old: s.value(f.Old), New: s.value(f.New)})
			}
		}
		if c.Op == "changed" && len(c.Fields) == 0 {
			if o.Status == n.Status && o.Kind == n.Kind {
				unchanged++
				continue
			}
		}
		if c.Op == "changed" && o.Status != n.Status {
			c.Fields = append(c.Fields, fieldView{Path: "status", Op: "change", Old: s.text(string(o.Status)), New: s.text(string(n.Status))})
		}
		out = append(out, c)
	}
	return out, unchanged
}

func cfgOf(r *statestore.Resource) map[string]any {
	if r == nil {
		return nil
	}
	return r.DesiredConfig
}

func outOf(r *statestore.Resource) map[string]any {
	if r == nil {
		return nil
	}
	return r.Outputs
}

// value shows a diff's side: strings as they are, the rest as JSON, "-"
// for none.
func (s *Server) value(v any) string {
	if v == nil {
		return "-"
	}
	if str, ok := v.(string); ok {
		return s.text(str)
	}
	b, _ := json.Marshal(plan.Mask(v))
	return s.text(string(b))
}
