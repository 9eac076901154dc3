package deploy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// bind returns the Binding of a plan of res made against st (docs/plan.md
// "Saved plans"): secret values digested with HMAC-SHA256 under the
// digest key of st's data key. When st has none and secret values are
// bound, the key is the plan's own: saved's (deploy --plan of a plan that
// made one), else the Sealer's fresh key (the one a first write seals
// with), whose wrapped block the Binding carries. No digest is ever
// unkeyed: without a key (no passphrase set) bind fails when required
// (plan --out, deploy --plan) and returns a nil Binding otherwise.
func (s *Service) bind(ctx context.Context, res *config.Resolved, st *statestore.State, t Target, read map[string]map[string]any,
	saved *plan.Binding, required bool) (*plan.Binding, error) {
	res = s.contentSecrets(res)
	var info, own *statestore.SecretsInfo
	if st != nil {
		info = st.Secrets
	}
	if info == nil {
		secret := false
		b := plan.Bind(res, t.Scope(), read, s.d.Version, plan.DigestHMAC, func(string, []byte) string { secret = true; return "" })
		if !secret {
			return b, nil
		}
		if saved != nil && saved.Secrets != nil {
			own = saved.Secrets
		} else {
			var err error
			if own, err = s.c.Store.FreshKey(ctx); err != nil {
				if !required {
					return nil, nil
				}
				return nil, fmt.Errorf("the plan binds secret values and the state has no data key yet: the plan's own key needs the secrets provider: %w", err)
			}
		}
		info = own
	}
	key, err := s.c.Store.DigestKey(ctx, info)
	if err != nil {
		if own != nil && saved != nil && saved.Secrets != nil {
			return nil, fmt.Errorf("the saved plan's own secrets key (the state had none when it was made): %w", err)
		}
		return nil, err
	}
	b := plan.Bind(res, t.Scope(), read, s.d.Version, plan.DigestHMAC, func(place string, data []byte) string {
		// The place, length-prefixed, then the value: equal secrets in
		// two fields get unrelated digests (docs/plan.md#saved-plans---out-deploy---plan).
		h := hmac.New(sha256.New, key)
		fmt.Fprintf(h, "%d:%s", len(place), place)
		h.Write(data)
		return "hmac-sha256:" + hex.EncodeToString(h.Sum(nil))
	})
	b.Secrets = own
	return b, nil
}

// contentSecrets returns a copy of res in which every config string that
// holds a known secret value (a connection string embedding a password)
// is a secret value, so a Binding digests it rather than keep it in plain
// text (docs/secrets.md#what-is-a-secret).
func (s *Service) contentSecrets(res *config.Resolved) *config.Resolved {
	wrap := func(v map[string]any) map[string]any {
		out, _ := jsontree.Copy(v, func(_ string, x any) (any, bool) {
			if sensitive.IsSecretValue(x) {
				return x, true
			}
			if str, ok := x.(string); ok && s.c.Masker.Contains(str) {
				return sensitive.Wrap(str), true
			}
			return nil, false
		}).(map[string]any)
		return out
	}
	cp := *res
	if res.EnvConfig != nil {
		cp.EnvConfig = wrap(res.EnvConfig)
	}
	cp.Components = make(map[string]*config.ResolvedComponent, len(res.Components))
	for addr, c := range res.Components {
		cc := *c
		cc.Config = wrap(c.Config)
		cp.Components[addr] = &cc
	}
	return &cp
}

// checkSavedBeforeLock re-resolves what saved binds, without a lock: the
// state's lineage and serial as stored now, the references read now and
// the configuration. It refuses (a *PlanStaleError) before any lock is
// taken when anything differs.
func (s *Service) checkSavedBeforeLock(ctx context.Context, saved *plan.Plan, res *config.Resolved, t Target, destroy bool) error {
	st, head, err := s.c.LoadOrNew(ctx, t)
	if err != nil {
		return err
	}
	read, err := s.readData(ctx, res, t, destroy)
	if err != nil {
		return err
	}
	now := &plan.Plan{Stack: t.Stack, Environment: t.Env, Scope: t.Scope(), Destroy: destroy}
	if head.Version != "" {
		now.Lineage, now.Serial = st.Lineage, st.Serial
	}
	if now.Binding, err = s.bind(ctx, res, st, t, read, saved.Binding, true); err != nil {
		return err
	}
	return checkBinding(saved, now)
}

// PlanStaleError: deploy --plan found that the saved plan no longer binds
// what would apply: Path names the first difference (docs/plan.md "Saved
// plans"). It wraps ErrPlanStale (exit 4).
type PlanStaleError struct {
	// Path is "state", "deployer version", "target", or a deployer.yaml path
	// ("services.web.components.site.config.image").
	Path         string
	Planned, Now string
}

func (e *PlanStaleError) Error() string {
	return fmt.Sprintf("%v: %s: planned %s, now %s: make the plan again (deployer plan --out FILE), review it, and deploy that file",
		ErrPlanStale, e.Path, e.Planned, e.Now)
}

func (e *PlanStaleError) Unwrap() error { return ErrPlanStale }

// checkBinding compares the target, the deployer version, the state's
// lineage and serial, then the binding of saved against now, in that
// order, and returns the first difference.
func checkBinding(saved, now *plan.Plan) error {
	if saved.Stack != now.Stack || saved.Environment != now.Environment || saved.Scope != now.Scope || saved.Destroy != now.Destroy {
		return &PlanStaleError{Path: "target",
			Planned: fmt.Sprintf("%s/%s scope %q destroy %v", saved.Stack, saved.Environment, saved.Scope, saved.Destroy),
			Now:     fmt.Sprintf("%s/%s scope %q destroy %v", now.Stack, now.Environment, now.Scope, now.Destroy)}
	}
	if saved.Binding == nil {
		return &PlanStaleError{Path: "binding", Planned: "(none: the file was made by a deployer that did not bind its plans)", Now: "required"}
	}
	if saved.Binding.DeployerVersion != now.Binding.DeployerVersion {
		return &PlanStaleError{Path: "deployer version", Planned: fmt.Sprintf("%q", saved.Binding.DeployerVersion), Now: fmt.Sprintf("%q", now.Binding.DeployerVersion)}
	}
	if saved.Lineage != now.Lineage || saved.Serial != now.Serial {
		return &PlanStaleError{Path: "state", Planned: fmt.Sprintf("serial %d (lineage %s)", saved.Serial, orNone(saved.Lineage)),
			Now: fmt.Sprintf("serial %d (lineage %s)", now.Serial, orNone(now.Lineage))}
	}
	if saved.Binding.Digest != now.Binding.Digest {
		planned := saved.Binding.Digest
		switch planned {
		case "sha256":
			planned += " (unkeyed digests of secret values, no longer accepted)"
		case plan.DigestHMACUnplaced:
			planned += " (digests of secret values without their place, no longer accepted: make the plan again)"
		}
		return &PlanStaleError{Path: "secrets digest", Planned: planned, Now: now.Binding.Digest}
	}
	if d := plan.CompareBinding(saved.Binding, now.Binding, now.Environment); d != nil {
		return &PlanStaleError{Path: d.Path, Planned: d.Planned, Now: d.Now}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// checkSavedPlan refuses, under the lock, a saved plan whose binding differs
// from what now binds (checkBinding), or whose steps differ from the ones
// planned now: a saved plan applies exactly its steps or nothing.
func checkSavedPlan(saved, now *plan.Plan) error {
	if err := checkBinding(saved, now); err != nil {
		return err
	}
	a, b := saved.Changes(), now.Changes()
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return &PlanStaleError{Path: b[i].Address, Planned: "(no step)", Now: string(b[i].Action)}
		case i >= len(b):
			return &PlanStaleError{Path: a[i].Address, Planned: string(a[i].Action), Now: "(no step)"}
		case a[i].Address != b[i].Address || a[i].Action != b[i].Action || a[i].MovedFrom != b[i].MovedFrom || a[i].ImportID != b[i].ImportID ||
			len(a[i].Diffs) != len(b[i].Diffs) || fmt.Sprint(jsonOf(a[i].Drift)) != fmt.Sprint(jsonOf(b[i].Drift)):
			return &PlanStaleError{Path: "steps[" + fmt.Sprint(i) + "]", Planned: a[i].Address + " " + string(a[i].Action),
				Now: b[i].Address + " " + string(b[i].Action)}
		}
	}
	return nil
}

// jsonOf is v as JSON: a saved plan's values, read back from its file,
// compare with ones made now.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
