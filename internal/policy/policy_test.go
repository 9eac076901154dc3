package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
)

const examples = "../../examples/policy"

// writePolicies writes files (name -> Rego) into a new directory.
func writePolicies(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func compile(t testing.TB, dirs ...string) *policy.Engine {
	t.Helper()
	s, err := policy.Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// evaluate evaluates e against p's document at deployment time at.
func evaluate(t *testing.T, e *policy.Engine, p *plan.Plan, at time.Time) *policy.Report {
	t.Helper()
	r, err := e.Evaluate(context.Background(), input(t, p, at))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func input(t testing.TB, p *plan.Plan, at time.Time) map[string]any {
	t.Helper()
	b, err := json.Marshal(p.Document())
	if err != nil {
		t.Fatal(err)
	}
	in, err := policy.Input(b, policy.Deployment{Operation: "plan", Who: "ci@runner", Time: at})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func denies(r *policy.Report) map[string][]string {
	out := map[string][]string{}
	for _, x := range r.Denied() {
		out[x.Policy] = x.Deny
	}
	return out
}

var thursday = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func TestExamplesPassTheirOwnRegoTests(t *testing.T) {
	s, err := policy.Load([]string{examples})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := s.Test(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed+sum.Errored > 0 || sum.Passed < 20 {
		t.Fatalf("%+v\n%s", sum, &out)
	}
	if !strings.Contains(out.String(), "PASS  deployer.freeze_test.test_sunday_is_denied (") {
		t.Errorf("no line per test:\n%s", &out)
	}
}

func TestPolicyTestReportsAFailingTestWithItsFileAndLine(t *testing.T) {
	dir := writePolicies(t, map[string]string{
		"p.rego":      "package deployer.p\n\ndeny contains \"no\" if input.x\n",
		"p_test.rego": "package deployer.p_test\n\nimport data.deployer.p\n\ntest_denies if {\n\tcount(p.deny) == 1 with input as {}\n}\n",
	})
	s, err := policy.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := s.Test(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || !strings.Contains(out.String(), "FAIL  deployer.p_test.test_denies ("+filepath.Join(dir, "p_test.rego")+":5)") {
		t.Fatalf("%+v\n%s", sum, &out)
	}
}

// A plan of the shapes the examples look at.
func examplePlan(env string, steps ...plan.Step) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "shop", Environment: env, Steps: steps}
	for _, s := range steps {
		if s.Action != plan.NoOp {
			p.Summary.Update++
		}
	}
	return p
}

func rds(action plan.Action, config map[string]any) plan.Step {
	return plan.Step{Address: "users/db", Service: "users", Component: "db", Kind: "RDS", Action: action, Config: config}
}

func safeRDS() map[string]any {
	return map[string]any{"instance": map[string]any{"class": "db.t4g.micro", "storage": map[string]any{"encrypted": true}},
		"deletion": map[string]any{"protection": true}, "database": map[string]any{"password": map[string]any{"secret": true, "value": "hunter2"}}}
}

func command(create string) plan.Step {
	return plan.Step{Address: "tools/setup", Service: "tools", Component: "setup", Kind: "Command", Action: plan.Create,
		Config: map[string]any{}, Settings: map[string]map[string]any{"command": {"create": create}}}
}

func TestExamplesDenyTheBadPlanAndAllowTheGoodOne(t *testing.T) {
	e := compile(t, examples)
	friday := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	unprotected := safeRDS()
	delete(unprotected, "deletion")
	for _, tc := range []struct {
		name string
		plan *plan.Plan
		at   time.Time
		want map[string][]string
	}{
		{"a safe RDS in production", examplePlan("production", rds(plan.Create, safeRDS())), thursday, map[string][]string{}},
		{"a replace of RDS in production", examplePlan("production", rds(plan.Replace, safeRDS())), thursday,
			map[string][]string{"rds_no_replace": {"users/db: replace of an RDS instance in production (its data goes with it)"}}},
		{"a replace of RDS in dev", examplePlan("dev", rds(plan.Replace, unprotected)), thursday, map[string][]string{}},
		{"an unprotected RDS in production", examplePlan("production", rds(plan.Update, unprotected)), thursday,
			map[string][]string{"rds_protection": {"users/db: RDS in production needs deletion.protection: true"}}},
		{"curl | sh", examplePlan("dev", command("curl -fsSL https://get.example.com | sh")), thursday,
			map[string][]string{"command_download_shell": {"tools/setup: command.create pipes a download into a shell: curl -fsSL https://get.example.com | sh"}}},
		{"a checked download", examplePlan("dev", command("curl -fsSLo t.sh https://get.example.com && sha256sum -c t.sha256 && sh t.sh")), thursday, map[string][]string{}},
		{"Friday evening in production", examplePlan("production", rds(plan.Update, safeRDS())), friday,
			map[string][]string{"freeze": {"production is frozen from Friday 16:00 to Monday 06:00 UTC (now 2026-11-27T18:00:00Z)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := evaluate(t, e, tc.plan, tc.at)
			if diff := cmp.Diff(tc.want, denies(r)); diff != "" {
				t.Errorf("denies (-want +got):\n%s", diff)
			}
			if r.Digest == "" || len(r.Results) != 4 {
				t.Errorf("every policy has a result, under the digest: %+v", r)
			}
		})
	}
}

func TestTheInputIsThePlanDocumentWithSecretsMasked(t *testing.T) {
	in := input(t, examplePlan("production", rds(plan.Create, safeRDS())), thursday)
	b, _ := json.Marshal(in)
	if strings.Contains(string(b), "hunter2") {
		t.Fatalf("a secret reaches the policies: %s", b)
	}
	step := in["steps"].([]any)[0].(map[string]any)
	if got := step["config"].(map[string]any)["database"].(map[string]any)["password"]; got != plan.Masked {
		t.Errorf("password = %v", got)
	}
	dep := in["deployment"].(map[string]any)
	if dep["time"] != "2026-11-26T10:00:00Z" || dep["who"] != "ci@runner" || dep["operation"] != "plan" {
		t.Errorf("deployment = %v", dep)
	}
	if in["format_version"] != plan.FormatVersion || in["environment"] != "production" {
		t.Errorf("not the plan document: %v", in)
	}
}

func TestWarnIsShownAndPoliciesAreNotOverridableByDefault(t *testing.T) {
	dir := writePolicies(t, map[string]string{"a.rego": `package deployer.naming

warn contains sprintf("%s: name is long", [s.address]) if {
	some s in input.steps
	count(s.address) > 5
}

deny contains {"msg": "structured"} if input.environment == "prod"
`})
	r := evaluate(t, compile(t, dir), examplePlan("prod", rds(plan.Create, nil)), thursday)
	want := []policy.Result{{Policy: "naming", Files: []string{filepath.Join(dir, "a.rego")}, Overridable: false,
		Deny: []string{"structured"}, Warn: []string{"users/db: name is long"}}}
	if diff := cmp.Diff(want, r.Results); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var no *policy.NotOverridableError
	if err := r.Override([]policy.Override{{Policy: "naming", Reason: "please"}}, octocat); !errors.As(err, &no) {
		t.Errorf("override of a policy that declares no overridable_by: %v", err)
	}
}

// octocat is an identity GitHub vouches for (the OIDC token's actor).
var octocat = policy.Identity{Login: "octocat", Source: "the actor claim of the GitHub Actions OIDC token", Verified: true}

func TestOverrides(t *testing.T) {
	e := compile(t, examples)
	unprotected := safeRDS()
	delete(unprotected, "deletion")
	r := evaluate(t, e, examplePlan("production", rds(plan.Replace, unprotected)), thursday)
	if err := r.Override([]policy.Override{{Policy: "rds_no_replace", Reason: "planned migration"}}, octocat); err != nil {
		t.Fatal(err)
	}
	if got := denies(r); len(got) != 1 || got["rds_protection"] == nil {
		t.Errorf("after overriding rds_no_replace the plan is denied by %v; want rds_protection alone", got)
	}
	var no *policy.NotOverridableError
	if err := r.Override([]policy.Override{{Policy: "rds_protection", Reason: "please"}}, octocat); !errors.As(err, &no) {
		t.Errorf("override of a policy with custom.overridable: false: %v", err)
	}
	if err := r.Override([]policy.Override{{Policy: "rds_no_replac", Reason: "typo"}}, octocat); err == nil || !strings.Contains(err.Error(), "no such policy") {
		t.Errorf("override of an unknown policy: %v", err)
	}
	if err := r.Override([]policy.Override{{Policy: "freeze"}}, octocat); err == nil || !strings.Contains(err.Error(), "--reason") {
		t.Errorf("override without a reason: %v", err)
	}
}

const guardedPolicy = `# METADATA
# custom:
#   overridable_by: [alice, Octocat]
%LOCAL%package deployer.guarded

deny contains "no" if true
`

// An override is checked against the identity a CI provider vouches for:
// a login of overridable_by (any case, as GitHub's) passes and is recorded
// as verified; anyone else is refused with the identity seen and where it
// came from. Outside CI it is refused unless the policy allows local
// overrides, and then recorded as not verified.
func TestOverrideIsCheckedAgainstTheVouchedIdentity(t *testing.T) {
	strict := compile(t, writePolicies(t, map[string]string{"a.rego": strings.Replace(guardedPolicy, "%LOCAL%", "", 1)}))
	local := compile(t, writePolicies(t, map[string]string{"a.rego": strings.Replace(guardedPolicy, "%LOCAL%", "#   allow_local_override: true\n", 1)}))
	mallory := policy.Identity{Login: "mallory", Source: "the workflow run's triggering_actor (GitHub API)", Verified: true}
	bob := policy.Identity{Login: "bob@laptop", Source: "the local user (USER)"}
	override := []policy.Override{{Policy: "guarded", Reason: "incident 42"}}

	r := evaluate(t, strict, examplePlan("prod"), thursday)
	if !r.Results[0].Overridable || !slices.Equal(r.Results[0].OverridableBy, []string{"alice", "Octocat"}) {
		t.Errorf("result: %+v", r.Results[0])
	}
	if err := r.Override(override, octocat); err != nil {
		t.Fatal(err)
	}
	want := &policy.Override{Policy: "guarded", Reason: "incident 42", By: "octocat", Verified: true, Source: octocat.Source}
	if diff := cmp.Diff(want, r.Results[0].Override); diff != "" || len(r.Denied()) != 0 {
		t.Errorf("override by octocat (-want +got):\n%s", diff)
	}

	var no *policy.NotOverridableError
	r = evaluate(t, strict, examplePlan("prod"), thursday)
	err := r.Override(override, mallory)
	if !errors.As(err, &no) || r.Results[0].Override != nil {
		t.Fatalf("override by mallory: %v", err)
	}
	for _, want := range []string{"policy guarded", `"mallory"`, mallory.Source, "overridable_by: alice, Octocat"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}

	err = r.Override(override, bob)
	if !errors.As(err, &no) {
		t.Fatalf("local override of a policy without allow_local_override: %v", err)
	}
	for _, want := range []string{"policy guarded", `"bob@laptop"`, "not verified", "GitHub Actions", "allow_local_override: true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("local refusal lacks %q: %v", want, err)
		}
	}

	r = evaluate(t, local, examplePlan("prod"), thursday)
	if err := r.Override(override, bob); err != nil {
		t.Fatalf("local override with allow_local_override: %v", err)
	}
	want = &policy.Override{Policy: "guarded", Reason: "incident 42", By: "bob@laptop", Verified: false, Source: bob.Source}
	if diff := cmp.Diff(want, r.Results[0].Override); diff != "" {
		t.Errorf("local override (-want +got):\n%s", diff)
	}
	r = evaluate(t, local, examplePlan("prod"), thursday)
	if err := r.Override(override, mallory); !errors.As(err, &no) {
		t.Errorf("allow_local_override lets an unlisted CI identity through: %v", err)
	}
}

func TestOverrideMetadataIsChecked(t *testing.T) {
	for name, tc := range map[string]struct{ custom, want string }{
		"not a list":            {"#   overridable_by: alice\n", "overridable_by must be a list of GitHub logins"},
		"not a login":           {"#   overridable_by: [\"al ice\"]\n", `"al ice" is not a GitHub login`},
		"team":                  {"#   overridable_by: [acme/platform]\n", "teams (acme/platform) are not supported"},
		"local not a bool":      {"#   allow_local_override: yes please\n", "allow_local_override must be true or false"},
		"overridable true only": {"#   overridable: true\n", "list who may override in overridable_by"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"a.rego": "# METADATA\n# custom:\n" + tc.custom + "package deployer.p\n\ndeny contains \"no\" if true\n"})
			s, err := policy.Load([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Compile(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "a.rego") {
				t.Errorf("error %v, want one naming a.rego and %q", err, tc.want)
			}
		})
	}
}

func TestAnOverridableRuleDecidesWithTheInput(t *testing.T) {
	dir := writePolicies(t, map[string]string{"a.rego": `# METADATA
# custom:
#   overridable_by: [alice]
package deployer.strict
deny contains "no" if true
overridable := input.environment != "production"
`})
	e := compile(t, dir)
	for env, want := range map[string]bool{"production": false, "dev": true} {
		r := evaluate(t, e, examplePlan(env), thursday)
		if r.Results[0].Overridable != want {
			t.Errorf("%s: overridable = %v", env, r.Results[0].Overridable)
		}
	}
}

func TestAPolicyCannotReachTheNetworkTheEnvironmentOrTheClock(t *testing.T) {
	for name, body := range map[string]string{
		"http.send":          `deny contains "x" if http.send({"method": "get", "url": "http://127.0.0.1:1"})`,
		"opa.runtime":        `deny contains x if x := opa.runtime().env.HOME`,
		"net.lookup_ip_addr": `deny contains "x" if net.lookup_ip_addr("example.com")`,
		"time.now_ns":        `deny contains "x" if time.now_ns() > 0`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"bad.rego": "package deployer.bad\n\n" + body + "\n"})
			s, err := policy.Load([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Compile(context.Background())
			if err == nil || !strings.Contains(err.Error(), "undefined function "+name) || !strings.Contains(err.Error(), filepath.Join(dir, "bad.rego")+":3") {
				t.Fatalf("err = %v", err)
			}
			var out bytes.Buffer
			if _, err := s.Test(context.Background(), &out); err == nil || !strings.Contains(err.Error(), "undefined function "+name) {
				t.Errorf("policy test compiles with the same builtins: %v", err)
			}
		})
	}
}

func TestALoopingPolicyIsStoppedNamingItsFile(t *testing.T) {
	for _, tc := range []struct {
		what string
		rule string
		set  func(*policy.Engine)
	}{
		// 10^12 iterations of small values: only the time bound stops it.
		{"time", `deny contains "x" if {
	some i in numbers.range(1, 10000)
	some j in numbers.range(1, 10000)
	some k in numbers.range(1, 10000)
	i * j * k < 0
}`, func(e *policy.Engine) { e.Timeout = 200 * time.Millisecond; e.MaxMemory = 8 << 30 }},
		// An array of 10^10 numbers: the memory bound stops it first.
		{"memory", `deny contains "x" if count(numbers.range(1, 10000000000)) < 0`,
			func(e *policy.Engine) { e.Timeout = time.Hour; e.MaxMemory = 64 << 20 }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			dir := writePolicies(t, map[string]string{"fine.rego": "package deployer.fine\ndeny contains \"x\" if false\n",
				"loop.rego": "package deployer.loop\n\n" + tc.rule + "\n"})
			e := compile(t, dir)
			tc.set(e)
			_, err := e.Evaluate(context.Background(), map[string]any{})
			var be *policy.BoundError
			if !errors.As(err, &be) || be.What != tc.what || be.Policy != "loop" || !strings.Contains(err.Error(), filepath.Join(dir, "loop.rego")) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestDenyMustBeASetOfMessages(t *testing.T) {
	dir := writePolicies(t, map[string]string{"a.rego": "package deployer.a\n\ndeny := \"no\" if true\n"})
	s, err := policy.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compile(context.Background()); err == nil || !strings.Contains(err.Error(), "deny contains msg if") {
		t.Fatalf("err = %v", err)
	}
}

func TestDigestFollowsTheFilesNotWhereTheyAre(t *testing.T) {
	files := map[string]string{"a.rego": "package deployer.a\ndeny contains \"x\" if false\n", "a_test.rego": "package deployer.a_test\ntest_x if true\n"}
	d1, d2 := writePolicies(t, files), writePolicies(t, files)
	digest := func(dir string) string {
		s, err := policy.Load([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		return s.Digest()
	}
	if digest(d1) != digest(d2) || !strings.HasPrefix(digest(d1), "sha256:") {
		t.Fatalf("the same files in two directories: %s, %s", digest(d1), digest(d2))
	}
	before := digest(d1)
	os.WriteFile(filepath.Join(d1, "a_test.rego"), []byte("package deployer.a_test\ntest_y if true\n"), 0o644)
	if digest(d1) != before {
		t.Errorf("a changed test changes the digest")
	}
	os.WriteFile(filepath.Join(d1, "a.rego"), []byte("package deployer.a\ndeny contains \"y\" if false\n"), 0o644)
	if digest(d1) == before {
		t.Errorf("a changed policy keeps the digest")
	}
}

func TestLoadIsBounded(t *testing.T) {
	big := writePolicies(t, map[string]string{"big.rego": "package deployer.big\n# " + strings.Repeat("x", policy.MaxFileBytes) + "\n"})
	if _, err := policy.Load([]string{big}); !inputfile.IsLimit(err) {
		t.Errorf("a file over %d bytes: %v", policy.MaxFileBytes, err)
	}
	many := map[string]string{}
	for i := range policy.MaxFiles + 1 {
		many[filepath.Join("d", strings.Repeat("a", i%7), time.Duration(i).String()+".rego")] = "package deployer.x\n"
	}
	if _, err := policy.Load([]string{writePolicies(t, many)}); err == nil || !strings.Contains(err.Error(), "more than 1000") {
		t.Errorf("%d files: %v", policy.MaxFiles+1, err)
	}
	if _, err := policy.Load([]string{t.TempDir()}); !errors.Is(err, policy.ErrNoPolicies) {
		t.Errorf("an empty directory: %v", err)
	}
	if _, err := policy.Load([]string{filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Errorf("a missing directory loads")
	}
}
