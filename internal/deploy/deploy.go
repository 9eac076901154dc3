// Package deploy is deployer's main use case (docs/design.md#the-main-job): lock -> load -> plan ->
// confirm -> apply -> save -> release, plus restore and state push, which take
// the same lock and follow the same state rules, the use cases that read
// or break what a project holds: state show, state locks and unlock, and
// lock exec, which runs a command under a lease.
//
// A use case takes ctx and its request struct (XRequest) and returns its
// result: methods of Service for the use cases on a stack's state, of
// Locking for the lock use cases that need no state (Locks, Unlock, Exec).
// ShowState, PushFile, RunStacks and SelectStacks run before any Service
// exists (they read, confirm or order first) and are functions of their
// request.
package deploy

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/proc"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Deps are the collaborators of Service, built by the CLI from deployer.yaml.
type Deps struct {
	// Locks and Store are the backends, opened; or Open opens them.
	Locks *lockmgr.Manager
	Store *statestore.Store
	// Open, when set, opens the lock and state backends once, on the first
	// use case that needs them, and after the engines' preflight: a missing
	// Pulumi CLI stops a deploy before any backend is touched
	// (docs/design.md#the-main-job). The use cases that take no lock (plan,
	// history) may get a nil Manager. Its error is the use case's.
	Open    func(ctx context.Context) (*lockmgr.Manager, *statestore.Store, error)
	Engines []engine.Engine
	// ReplaceOn gives the config paths that force replacement per kind;
	// nil takes them from the engines' kind catalogs.
	ReplaceOn func(kind string) []string
	Audit     *slog.Logger
	Now       func() time.Time
	Progress  io.Writer // stderr
	// UI shows the plan, asks for confirmation and hears each step start
	// and end (the live progress of a deploy, docs/command-kind.md#progress);
	// nil: NoUI.
	UI     UI
	Getenv func(string) string
	// Dir is where an errored state is saved when the state write fails
	// after infrastructure changed (docs/design.md#state-writes); default ".".
	Dir string
	// Observer receives finished deployments for metrics; nil discards them.
	Observer Observer
	// Version is the deployer version a saved plan binds (docs/plan.md
	// "Saved plans").
	Version string
	// Masker learns the secret values of the config and hides them in the
	// engines' progress and in recorded errors (docs/secrets.md); default:
	// a Masker of its own.
	Masker *secrets.Masker
}

// Service runs deployer's use cases.
type Service struct {
	d Deps
	x *executor.Executor // applies the plans

	mu       sync.Mutex
	opened   bool  // Deps.Open was called
	openErr  error // and failed
	checked  bool  // the engines' preflight passed
	checkErr error

	prepared map[prepareKey]*prepared // each target's config, resolved once

	// plansBuilt counts the plans built (buildPlan): a deploy builds one,
	// two when the state moved before its lease (docs/design.md#read-once-plan-once).
	plansBuilt atomic.Int64
}

// New returns a Service; zero fields of d take defaults.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	if d.ReplaceOn == nil {
		d.ReplaceOn = replaceOn(d.Engines)
	}
	d.Audit = cmp.Or(d.Audit, slog.New(slog.DiscardHandler))
	d.Progress = cmp.Or(d.Progress, io.Discard)
	d.Dir = cmp.Or(d.Dir, ".")
	d.Observer = cmp.Or(d.Observer, Observer(nopObserver{}))
	d.Masker = cmp.Or(d.Masker, secrets.NewMasker())
	if d.UI == nil {
		d.UI = NoUI{}
	}
	s := &Service{d: d}
	s.x = &executor.Executor{Engines: d.Engines, Steps: d.UI, Learn: s.learnOutputs}
	return s
}

// open opens the backends with Deps.Open, once; without Open, Locks and
// Store were given.
func (s *Service) open(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d.Open != nil && !s.opened {
		s.opened = true
		s.d.Locks, s.d.Store, s.openErr = s.d.Open(ctx)
	}
	return s.openErr
}

// Target is what a command acts on: a stack/environment, optionally narrowed
// to one service, one component or several components, less the services
// and components excluded (docs/commands.md#deploy, docs/plan.md#scope).
type Target struct {
	Stack, Env string
	Service    string // --service
	Component  string // --component SVC/C: Service and Component both set
	// Components are --component given more than once (or as a comma
	// list), "svc/comp" each, joined by commas; Service and Component are
	// then empty. A string, so that a Target stays comparable.
	Components string
	// Exclude are --exclude, "svc" or "svc/comp" each, joined by commas:
	// left out of the plan.
	Exclude string
}

// LockKey returns the key of the target's lock level (docs/design.md#lock-keys):
// several components take their service's lock when they share one, else
// the stack's.
func (t Target) LockKey() string {
	switch {
	case t.Component != "":
		return lockmgr.ComponentKey(t.Stack, t.Env, t.Service, t.Component)
	case t.Service != "":
		return lockmgr.ServiceKey(t.Stack, t.Env, t.Service)
	case t.Components != "":
		addrs := strings.Split(t.Components, ",")
		svc, _ := config.SplitAddress(addrs[0])
		for _, addr := range addrs[1:] {
			if s, _ := config.SplitAddress(addr); s != svc {
				return lockmgr.StackKey(t.Stack, t.Env)
			}
		}
		return lockmgr.ServiceKey(t.Stack, t.Env, svc)
	default:
		return lockmgr.StackKey(t.Stack, t.Env)
	}
}

// Scope returns the plan scope (plan.InScope): "", "svc", "svc/comp", or
// the components and exclusions as a list.
func (t Target) Scope() string {
	var targets []string
	switch {
	case t.Component != "":
		targets = []string{config.Address(t.Service, t.Component)}
	case t.Service != "":
		targets = []string{t.Service}
	case t.Components != "":
		targets = strings.Split(t.Components, ",")
	}
	return plan.Scope(targets, list(t.Exclude))
}

// WithScope returns t narrowed to scope (a plan's, plan.Scope), as the
// flags that made it would have.
func (t Target) WithScope(scope string) Target {
	targets, exclude := plan.ScopeTerms(scope)
	t.Service, t.Component, t.Components, t.Exclude = "", "", "", strings.Join(exclude, ",")
	switch {
	case len(targets) == 1 && strings.Contains(targets[0], "/"):
		t.Service, t.Component = config.SplitAddress(targets[0])
	case len(targets) == 1:
		t.Service = targets[0]
	default:
		t.Components = strings.Join(targets, ",")
	}
	return t
}

// list splits a comma list; "" is none.
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Validate checks the target's names (docs/configuration.md#names) before any backend is touched.
func (t Target) Validate() error {
	checks := []struct{ what, v string }{{"stack", t.Stack}, {"environment", t.Env}}
	if t.Service != "" || t.Component != "" {
		checks = append(checks, struct{ what, v string }{"service", t.Service})
	}
	if t.Component != "" {
		checks = append(checks, struct{ what, v string }{"component", t.Component})
	}
	for _, addr := range slices.Concat(list(t.Components), list(t.Exclude)) {
		svc, comp, isComp := strings.Cut(addr, "/")
		checks = append(checks, struct{ what, v string }{"service", svc})
		if isComp {
			checks = append(checks, struct{ what, v string }{"component", comp})
		}
	}
	for _, c := range checks {
		if err := config.ValidateName(c.what, c.v); err != nil {
			return err
		}
	}
	return nil
}

// NewDeploymentID returns "dep-" and 12 hex digits (docs/design.md#lock-record).
func NewDeploymentID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "dep-" + hex.EncodeToString(b[:])
}

// gitInfo returns commit and branch from CI variables or the local git
// checkout in dir; empty when unknown.
func (s *Service) gitInfo(dir string) (commit, branch string) {
	_, md := lockmgr.Holder(s.d.Getenv)
	commit, branch = md.GitCommit, md.GitBranch
	if commit == "" {
		commit = gitLine(dir, "rev-parse", "HEAD")
	}
	if branch == "" {
		branch = gitLine(dir, "rev-parse", "--abbrev-ref", "HEAD")
	}
	return commit, branch
}

// gitLine runs git in dir under the supervisor and returns what it printed,
// trimmed: a commit or a branch name, read up to 4 KiB; "" when git fails
// or prints more.
func gitLine(dir string, args ...string) string {
	c := proc.Command(context.Background(), "git", append([]string{"-C", dir}, args...)...)
	c.Env = proc.Environ(proc.Git, os.Environ())
	out, over, err := c.OutputAtMost(4 << 10)
	if err != nil || over {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// readState reads the state document of t once, unverified
// (statestore.Store.ReadDoc); nil when there is none yet.
func (s *Service) readState(ctx context.Context, t Target) (*statestore.Doc, error) {
	doc, err := s.d.Store.ReadDoc(ctx, t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &doc, nil
}

// loadOrNew loads the state of the target, or a new empty one.
func (s *Service) loadOrNew(ctx context.Context, t Target) (*statestore.State, statestore.Head, error) {
	st, head, err := s.d.Store.Load(ctx, t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return statestore.NewState(t.Stack, t.Env), statestore.Head{}, nil
	}
	if err != nil {
		return nil, statestore.Head{}, err
	}
	return st, head, nil
}

// PlanRequest is one plan.
type PlanRequest struct {
	Config  *config.Config
	Target  Target
	Destroy bool
	// CheckEngines says Refresh or Preview follows (plan --refresh,
	// --preview): the engines' preflight runs first, before the state
	// backend is opened.
	CheckEngines bool
	// Save says the plan is saved (plan --out): its Binding is required,
	// so a plan that binds secret values when the state has no data key
	// yet fails without a secrets key (docs/plan.md "Saved plans");
	// otherwise such a plan has no Binding.
	Save bool
	// Policy checks the plan (docs/policy.md): its results are the plan's
	// Policy; a deny is not an error of Plan (the caller decides).
	Policy *PolicyCheck
	// Replace are components to replace though their config does not
	// force it (plan --replace ADDR; plan.Options.Replace).
	Replace []string
}

// opName is input.deployment.operation: "destroy" for a destroy, else op.
func opName(destroy bool, op string) string {
	if destroy {
		return "destroy"
	}
	return op
}

// Plan builds the plan of the target against the stored state without
// locking (like `terraform plan -lock=false`; the deploy re-plans under its
// lock): the planning path of Apply (prepare, then planFor), stopped before
// the confirmation.
func (s *Service) Plan(ctx context.Context, req PlanRequest) (*plan.Plan, error) {
	if err := req.Policy.load(ctx); err != nil {
		return nil, err
	}
	pr, err := s.prepare(ctx, req.Config, req.Target, req.CheckEngines)
	if err != nil {
		return nil, err
	}
	pr.replace = req.Replace
	pl, err := s.planFor(ctx, pr, req.Destroy, nil, req.Save)
	if err != nil {
		return nil, err
	}
	if err := plan.CheckProtected(pl.plan); err != nil {
		return nil, err
	}
	if err := s.checkPolicy(ctx, pl.plan, req.Policy, opName(req.Destroy, "plan"), pr.cfg.Dir); err != nil {
		if _, denied := err.(*policy.DeniedError); !denied {
			return nil, err
		}
	}
	return pl.plan, nil
}

// buildPlan diffs res against st; read holds the outputs of data components
// read for this plan (readData).
func (s *Service) buildPlan(res *config.Resolved, st *statestore.State, head statestore.Head, t Target, destroy bool,
	read map[string]map[string]any, moves []plan.Move, replace []string) (*plan.Plan, error) {
	if !destroy {
		if err := refuseUndeployedDependencies(res, st, t); err != nil {
			return nil, err
		}
	}
	stored := st
	if head.Version == "" {
		stored = nil // no state yet: the plan is bound to no lineage
	}
	s.plansBuilt.Add(1)
	p, err := plan.Build(res, stored, plan.Options{ReplaceOn: s.d.ReplaceOn, Settings: kindSettings(s.d.Engines), Scope: t.Scope(), Destroy: destroy, Read: read, Moves: moves, Replace: replace})
	if err != nil {
		return nil, err
	}
	return p, s.x.MarkDeletedBy(p)
}

// refuseUndeployedDependencies refuses, with a *TargetError, a scoped plan
// of a component whose dependency outside the scope was never deployed: it
// would run with that dependency's inputs empty (docs/plan.md#scope).
func refuseUndeployedDependencies(res *config.Resolved, st *statestore.State, t Target) error {
	missing := plan.UndeployedDependencies(res, st, t.Scope())
	if len(missing) == 0 {
		return nil
	}
	var lines []string
	for _, addr := range slices.Sorted(maps.Keys(missing)) {
		lines = append(lines, fmt.Sprintf("%s depends on %s", addr, strings.Join(missing[addr], ", ")))
	}
	return &TargetError{Msg: fmt.Sprintf("%s, outside the target and not deployed yet: its inputs would be empty. "+
		"Deploy the dependencies first (--component %s), add them to the target, or deploy the whole stack",
		strings.Join(lines, "; "), strings.Join(slices.Sorted(maps.Keys(dependencySet(missing))), ","))}
}

// dependencySet is every dependency named in missing.
func dependencySet(missing map[string][]string) map[string]bool {
	set := map[string]bool{}
	for _, deps := range missing {
		for _, d := range deps {
			set[d] = true
		}
	}
	return set
}

// resolve applies the environment's overrides (references left as they
// are) and checks the scope.
func resolve(cfg *config.Config, t Target) (*config.Resolved, error) {
	res, err := cfg.Resolve(t.Env)
	if err != nil {
		return nil, err
	}
	res.Stack = t.Stack
	return res, checkScope(res, t)
}

// checkScope refuses --service/--component/--exclude names absent from
// the config with a *TargetError that suggests the closest name.
func checkScope(res *config.Resolved, t Target) error {
	services := map[string]bool{}
	var comps []string
	for addr := range res.Components {
		svc, _ := config.SplitAddress(addr)
		services[svc] = true
		comps = append(comps, addr)
	}
	slices.Sort(comps)
	known := slices.Sorted(maps.Keys(services))
	targets, exclude := plan.ScopeTerms(t.Scope())
	for _, term := range targets {
		if err := checkTerm(res, term, known, comps, "--component (SERVICE/COMPONENT)", "--service"); err != nil {
			return err
		}
	}
	for _, term := range exclude {
		if err := checkTerm(res, term, known, comps, "--exclude", "--exclude"); err != nil {
			return err
		}
	}
	return nil
}

// checkTerm refuses a scope term (a service, or a component "svc/comp")
// that names nothing in res.
func checkTerm(res *config.Resolved, term string, services, comps []string, compFlag, svcFlag string) error {
	if strings.Contains(term, "/") {
		if _, ok := res.Components[term]; ok {
			return nil
		}
		return &TargetError{Msg: fmt.Sprintf("component %s is not in deployer.yaml%s: check %s", term, hint(term, comps), compFlag)}
	}
	if slices.Contains(services, term) {
		return nil
	}
	return &TargetError{Msg: fmt.Sprintf("service %q is not in deployer.yaml%s: check %s", term, hint(term, services), svcFlag)}
}

// hint is ` (did you mean "x"?)`, or the known names when none is close.
func hint(name string, known []string) string {
	if m := config.Suggest(name, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	if len(known) == 0 {
		return ""
	}
	if len(known) > 8 {
		known = append(known[:8:8], "...")
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// TargetError: --service or --component names something deployer.yaml does
// not have. It is a usage error (exit 2, docs/exit-codes.md).
type TargetError struct{ Msg string }

func (e *TargetError) Error() string { return e.Msg }
