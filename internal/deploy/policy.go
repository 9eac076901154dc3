package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
)

// PolicyCheck is what a plan's policies are evaluated with
// (docs/policy.md): the directories of the policy files (deployer.yaml's
// policy.paths and --policy DIR), which the use case loads and compiles
// once, before it touches anything, and, for a deploy, the overrides of
// --override-policy NAME --reason TEXT. A nil *PolicyCheck, or one
// without Dirs, checks nothing.
type PolicyCheck struct {
	Dirs      []string
	Overrides []policy.Override
	// Identity is who asks for the overrides, as a CI provider vouches for
	// it or the local user, not verified (docs/policy.md#overrides); when
	// its Login is empty, the lock holder's name, not verified.
	Identity policy.Identity

	once   sync.Once
	engine *policy.Engine
	err    error
}

func (c *PolicyCheck) active() bool { return c != nil && len(c.Dirs) > 0 }

// load loads and compiles the policies of c.Dirs, once (policy.Open); a
// check that is not active loads nothing. Errors: policy.Open's (a file
// that does not parse or compile, named with its line).
func (c *PolicyCheck) load(ctx context.Context) error {
	if !c.active() {
		return nil
	}
	c.once.Do(func() { c.engine, c.err = policy.Open(ctx, c.Dirs) })
	return c.err
}

// checkPolicy evaluates the policies against p's document (as plan --json
// prints it, with the deployment's metadata: docs/policy.md#input), sets
// p.Policy, binds the policies' digest in p's Binding and applies the
// overrides. op is the command ("deploy", "plan"); a destroy plan's
// operation is "destroy" (opName). It returns *policy.DeniedError when a
// deny is left, an override's error (an unknown or not overridable
// policy), or the evaluation's (*policy.BoundError).
func (s *Service) checkPolicy(ctx context.Context, p *plan.Plan, c *PolicyCheck, op, dir string) error {
	if !c.active() {
		return nil
	}
	if err := c.load(ctx); err != nil {
		return err
	}
	doc := p.Document()
	doc.Binding, doc.Policy = nil, nil
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("policy input: %w", err)
	}
	who, _ := lockmgr.Holder(s.c.Getenv)
	if a := s.c.Getenv("GITHUB_ACTOR"); a != "" && s.c.Getenv("GITHUB_ACTIONS") == "true" {
		who = a // the person, not the run's lock holder name (github-actions-run-ID)
	}
	commit, branch := s.c.GitInfo(dir)
	in, err := policy.Input(b, policy.Deployment{Operation: opName(p.Destroy, op), Who: who, Commit: commit, Branch: branch,
		CI: s.c.Getenv("CI") == "true" || s.c.Getenv("GITHUB_ACTIONS") == "true", Time: s.c.Now()})
	if err != nil {
		return err
	}
	r, err := c.engine.Evaluate(ctx, jsontree.MapStrings(in, s.c.Masker.Mask))
	if err != nil {
		return err
	}
	maskMessages(r, s.c.Masker.WithEncodings().Mask)
	id := c.Identity
	if id.Login == "" {
		id = policy.Identity{Login: who, Source: "the lock holder's name"}
	}
	p.Policy = r
	if p.Binding != nil {
		p.Binding.PolicyDigest = r.Digest
	}
	if err := r.Override(c.Overrides, id); err != nil {
		return err
	}
	if d := r.Denied(); len(d) > 0 {
		return &policy.DeniedError{Results: d}
	}
	return nil
}

// maskMessages passes every deny and warn message of r through mask (a
// Masker that knows the secrets' computed forms: reversed, base64), before
// they are shown or saved anywhere.
func maskMessages(r *policy.Report, mask func(string) string) {
	for i := range r.Results {
		for _, msgs := range []*[]string{&r.Results[i].Deny, &r.Results[i].Warn} {
			for j, m := range *msgs {
				(*msgs)[j] = mask(m)
			}
		}
	}
}

// checkSavedPolicies refuses a saved plan made under other policies than
// c's (docs/policy.md#saved-plans): ErrPlanStale at path "policies".
func checkSavedPolicies(saved *plan.Plan, c *PolicyCheck) error {
	var planned, now string
	if saved.Binding != nil {
		planned = saved.Binding.PolicyDigest
	}
	if c.active() {
		if c.engine == nil {
			return fmt.Errorf("policies of %v not loaded", c.Dirs)
		}
		now = c.engine.Digest
	}
	if planned == now {
		return nil
	}
	return &PlanStaleError{Path: "policies", Planned: orNone(planned), Now: orNone(now)}
}

// auditOverrides writes one policy.overridden audit event per policy
// whose denies the deployment overrides.
func (s *Service) auditOverrides(p *plan.Plan, depID string, t Target) {
	if p.Policy == nil {
		return
	}
	for _, r := range p.Policy.Results {
		if r.Override == nil || len(r.Deny) == 0 {
			continue
		}
		s.c.Audit.Warn("policy.overridden", "deployment_id", depID, "stack", t.Stack, "environment", t.Env,
			"policy", r.Policy, "reason", r.Override.Reason, "by", r.Override.By, "verified", r.Override.Verified,
			"by_source", r.Override.Source, "denies", r.Deny)
	}
}

// opName is input.deployment.operation: "destroy" for a destroy, else op.
func opName(destroy bool, op string) string {
	if destroy {
		return "destroy"
	}
	return op
}
