package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Bounds on one evaluation of all policies (docs/policy.md#bounds).
const (
	// DefaultTimeout bounds the time of evaluating every policy against
	// one plan.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxMemory bounds, in bytes, how much the Go heap may grow
	// while the policies are evaluated.
	DefaultMaxMemory = 1 << 30
)

// Rule names of the convention (docs/policy.md#rules): conftest's.
const (
	RuleDeny        = "deny"
	RuleWarn        = "warn"
	RuleOverridable = "overridable"
)

// METADATA custom keys of a policy's package that say who may override it
// (docs/policy.md#overrides).
const (
	// MetaOverridableBy lists the GitHub logins that may override the
	// policy's denies from GitHub Actions.
	MetaOverridableBy = "overridable_by"
	// MetaAllowLocalOverride lets anyone override outside CI, recorded as
	// not verified.
	MetaAllowLocalOverride = "allow_local_override"
)

// removedBuiltins are the builtins a policy may not call: they read the
// network (http.send, net.lookup_ip_addr), the process's environment and
// configuration (opa.runtime), or the clock and randomness, which would make
// a saved plan's results differ from the deploy's for no change of input (the
// deployment's time is input.deployment.time) (docs/policy.md#sandbox).
var removedBuiltins = map[string]bool{
	"http.send":          true,
	"opa.runtime":        true,
	"net.lookup_ip_addr": true,
	"time.now_ns":        true,
	"rand.intn":          true,
}

// Capabilities are OPA's builtins of this version less removedBuiltins;
// a policy calling one of those fails to compile ("undefined function").
func Capabilities() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = slices.DeleteFunc(slices.Clone(c.Builtins), func(b *ast.Builtin) bool { return removedBuiltins[b.Name] })
	c.AllowNet = []string{} // no remote schema either
	return c
}

// Policy is one package under Namespace with a deny or warn rule.
type Policy struct {
	// Name is the package path below Namespace ("rds.production"), or
	// Namespace itself for `package deployer`.
	Name  string
	Files []string // the paths of the files of its package
	// Overridable: the package's METADATA names who may override it
	// (custom.overridable_by or custom.allow_local_override; default: no
	// one) and does not say custom.overridable: false; an `overridable`
	// rule, evaluated with the input, can only take it away.
	Overridable bool
	// OverridableBy are the GitHub logins of custom.overridable_by;
	// AllowLocalOverride is custom.allow_local_override
	// (docs/policy.md#overrides).
	OverridableBy      []string
	AllowLocalOverride bool
	notOverridable     bool // custom.overridable: false
	query              rego.PreparedEvalQuery
	rules              []string // of RuleDeny, RuleWarn, RuleOverridable that it defines
}

// Engine evaluates compiled policies.
type Engine struct {
	Digest   string
	Policies []*Policy // sorted by Name
	// Timeout and MaxMemory (bytes) bound Evaluate; zero: the defaults.
	Timeout   time.Duration
	MaxMemory uint64
}

// Compile compiles the Set's policy files (tests left out) with
// Capabilities and prepares one query per policy. Errors name the file and
// line (a compile error, a removed builtin, a rule of the convention
// that is not a set).
func (s *Set) Compile(ctx context.Context) (*Engine, error) {
	modules := map[string]*ast.Module{}
	byPkg := map[string]*Policy{}
	for _, f := range s.Files {
		if f.IsTest() {
			continue
		}
		modules[f.Path] = f.Module
		name, ok := policyName(f.Module.Package.Path)
		if !ok {
			continue
		}
		p := byPkg[name]
		if p == nil {
			p = &Policy{Name: name}
			byPkg[name] = p
		}
		p.Files = append(p.Files, f.Path)
		for _, a := range f.Module.Annotations {
			if a.Scope == "package" || a.Scope == "subpackages" {
				if err := p.readOverrideMetadata(a); err != nil {
					return nil, err
				}
			}
		}
		for _, r := range f.Module.Rules {
			ref := r.Head.Ref()
			if len(ref) == 0 {
				continue
			}
			v, ok := ref[0].Value.(ast.Var)
			if !ok {
				continue
			}
			n := string(v)
			if n != RuleDeny && n != RuleWarn && n != RuleOverridable {
				continue
			}
			if n != RuleOverridable && (len(ref) != 1 || r.Head.RuleKind() != ast.MultiValue) {
				return nil, fmt.Errorf("policy %s: %s: %s must be a set of messages (%s contains msg if { ... }), see docs/policy.md#rules",
					name, r.Location, n, n)
			}
			if !slices.Contains(p.rules, n) {
				p.rules = append(p.rules, n)
			}
		}
	}
	c := ast.NewCompiler().WithCapabilities(Capabilities()).WithDefaultRegoVersion(ast.RegoV1)
	if c.Compile(modules); c.Failed() {
		return nil, fmt.Errorf("policy: %w", c.Errors)
	}
	e := &Engine{Digest: s.Digest()}
	for _, p := range byPkg {
		p.Overridable = !p.notOverridable && (len(p.OverridableBy) > 0 || p.AllowLocalOverride)
		if !slices.Contains(p.rules, RuleDeny) && !slices.Contains(p.rules, RuleWarn) {
			continue
		}
		slices.Sort(p.rules)
		var q []string
		for _, r := range p.rules {
			q = append(q, fmt.Sprintf("%s := data.%s.%s", r, packagePath(p.Name), r))
		}
		pq, err := rego.New(rego.Compiler(c), rego.Query(strings.Join(q, "; ")), rego.Capabilities(Capabilities()),
			rego.SetRegoVersion(ast.RegoV1)).PrepareForEval(ctx)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", p.Name, err)
		}
		p.query = pq
		e.Policies = append(e.Policies, p)
	}
	slices.SortFunc(e.Policies, func(a, b *Policy) int { return strings.Compare(a.Name, b.Name) })
	return e, nil
}

// policyName returns the policy name of a package path (data.deployer.x.y:
// "x.y"; data.deployer: "deployer"), false outside Namespace.
func policyName(path ast.Ref) (string, bool) {
	if len(path) < 2 || path[1].Value.Compare(ast.String(Namespace)) != 0 {
		return "", false
	}
	if len(path) == 2 {
		return Namespace, true
	}
	parts := make([]string, 0, len(path)-2)
	for _, t := range path[2:] {
		s, ok := t.Value.(ast.String)
		if !ok {
			return "", false
		}
		parts = append(parts, string(s))
	}
	return strings.Join(parts, "."), true
}

func packagePath(name string) string {
	if name == Namespace {
		return Namespace
	}
	var b strings.Builder
	b.WriteString(Namespace)
	for p := range strings.SplitSeq(name, ".") {
		fmt.Fprintf(&b, "[%q]", p)
	}
	return b.String()
}

// BoundError: an evaluation went past the time or memory bound. Policy and
// Files name the policy being evaluated when it was stopped.
type BoundError struct {
	Policy string
	Files  []string
	What   string // "time" or "memory"
	Limit  string // "10s", "1 GiB"
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("policy %s (%s) was stopped: it went past the %s bound of %s; a rule that iterates without end or builds ever larger values? (docs/policy.md#bounds)",
		e.Policy, strings.Join(e.Files, ", "), e.What, e.Limit)
}

var errMemory = errors.New("memory bound")

// Evaluate evaluates every policy against input (a JSON-shaped value: the
// document of docs/policy.md#input) and returns their results, in policy
// name order. Errors: *BoundError when the evaluation of all policies
// together takes longer than Timeout or grows the heap by more than
// MaxMemory; an evaluation error naming the policy.
func (e *Engine) Evaluate(ctx context.Context, input any) (*Report, error) {
	r := &Report{Digest: e.Digest, Results: []Result{}}
	if len(e.Policies) == 0 {
		return r, nil
	}
	value, err := ast.InterfaceToValue(input)
	if err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	timeout, limit := e.Timeout, e.MaxMemory
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if limit == 0 {
		limit = DefaultMaxMemory
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	defer cancelT()
	stop := watchMemory(limit, cancel)
	defer stop()
	for _, p := range e.Policies {
		rs, err := p.query.Eval(ctx, rego.EvalParsedInput(value))
		if err != nil {
			switch {
			case errors.Is(context.Cause(ctx), errMemory):
				return nil, &BoundError{Policy: p.Name, Files: p.Files, What: "memory", Limit: sizeText(limit)}
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				return nil, &BoundError{Policy: p.Name, Files: p.Files, What: "time", Limit: timeout.String()}
			}
			return nil, fmt.Errorf("policy %s (%s): %w", p.Name, strings.Join(p.Files, ", "), err)
		}
		res := Result{Policy: p.Name, Files: p.Files, Overridable: p.Overridable,
			OverridableBy: p.OverridableBy, AllowLocalOverride: p.AllowLocalOverride}
		if len(rs) == 1 {
			b := rs[0].Bindings
			res.Deny = messages(b[RuleDeny])
			res.Warn = messages(b[RuleWarn])
			if v, ok := b[RuleOverridable].(bool); ok && !v {
				res.Overridable = false
			}
		}
		r.Results = append(r.Results, res)
	}
	return r, nil
}

// messages renders a deny or warn set: strings as they are, an object with
// a "msg" (conftest's structured messages) as its msg, anything else as
// JSON; sorted.
func messages(v any) []string {
	set, _ := v.([]any)
	out := make([]string, 0, len(set))
	for _, m := range set {
		if s, ok := m.(string); ok {
			out = append(out, s)
			continue
		}
		if o, ok := m.(map[string]any); ok {
			if s, ok := o["msg"].(string); ok {
				out = append(out, s)
				continue
			}
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// watchMemory cancels with errMemory when the Go heap's objects grow by
// more than limit bytes over what they were at the call; stop ends it.
func watchMemory(limit uint64, cancel context.CancelCauseFunc) (stop func()) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(sample)
				if v := sample[0].Value.Uint64(); v > base && v-base > limit {
					cancel(errMemory)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

func sizeText(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d B", n)
}
