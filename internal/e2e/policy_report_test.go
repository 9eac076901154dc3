//go:build unix

package e2e

import (
	"os"
	"strings"
	"testing"
)

// The pull request comment and the job summary show the policy table:
// each deny and warn with its policy, level and whether it is overridden;
// a denied deploy's summary shows why, an overridden one by whom.
func TestPolicyTableInThePullRequestCommentAndTheJobSummary(t *testing.T) {
	g := newFakeGitHub(t)
	g.runActor = "octocat" // the run's triggering actor, as the API says
	p := newProject(t, strings.Replace(strings.Replace(policyYAML, "%BACKEND%", "backend: {state: file://.deployer, lock: file://.deployer}", 1),
		"%CREATE%", "curl --version | sh -c true", 1))
	copyExamplePolicies(t, p, "freeze")
	p.env = append(prEnv(t, g), "GITHUB_ACTOR=octocat")
	summary := endpointOf(p.env, "GITHUB_STEP_SUMMARY")

	p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 1 {
		t.Fatalf("want one comment, got %d", len(comments))
	}
	const table = "**Policy:** 3 policies: 1 deny, 0 overridden, 0 warn, 2 pass.\n\n" +
		"| Policy | Level | Message | Overridden |\n|---|---|---|---|\n" +
		"| `command_download_shell` | deny | tools/setup: command.create pipes a download into a shell: curl --version \\| sh -c true | no |\n\n" +
		"Pass: `rds_no_replace`, `rds_protection`.\n\n"
	commentHas(t, "the comment", comments[0].Body, "| `tools/setup` | Command | + create |", table)
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	commentHas(t, "the job summary of plan", string(b), "### deployer plan: shop/production\n\n", table)

	if err := os.Remove(summary); err != nil {
		t.Fatal(err)
	}
	p.mustRun(5, "deploy", "-e", "production", "--yes")
	b, _ = os.ReadFile(summary)
	commentHas(t, "the job summary of a denied deploy", string(b), "### deployer deploy: shop/production\n\n", table)

	if err := os.Remove(summary); err != nil {
		t.Fatal(err)
	}
	p.mustRun(0, "deploy", "-e", "production", "--yes", "--override-policy", "command_download_shell", "--reason", "vendor installer, checksum pinned")
	b, _ = os.ReadFile(summary)
	commentHas(t, "the job summary of an overridden deploy", string(b), "**Policy:** 3 policies: 0 deny, 1 overridden, 0 warn, 2 pass.",
		"| `command_download_shell` | deny | tools/setup: command.create pipes a download into a shell: curl --version \\| sh -c true | yes, by octocat: vendor installer, checksum pinned |",
		"**Result:** success: 1 created")
}

// deploy --all and plan --all check each stack's plan: a denied stack
// runs nothing and skips the stacks that read it, like a failed one; the
// others are deployed. deploy --all exits 5, plan --all --detailed-exitcode
// too.
func TestPolicyDeployAllSkipsTheReadersOfADeniedStack(t *testing.T) {
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	r.write("policy/freeze_left.rego", "# METADATA\n# custom:\n#   overridable_by: [octocat]\npackage deployer.freeze_left\n\ndeny contains \"left is frozen\" if input.stack == \"left\"\n")

	res := r.mustRun(2, "plan", "--all", "-e", "dev", "--detailed-exitcode")
	if strings.Contains(res.stdout, "denied") {
		t.Fatalf("without --policy nothing is denied:\n%s", res)
	}
	got := r.all(5, "deploy", "--all", "-e", "dev", "--yes", "--policy", "policy")
	want := "alone=applied, root=applied, left=denied, right=applied, leaf=skipped (producer left denied)"
	if s := statusesOf(got); s != want {
		t.Fatalf("deploy --all: %s, want %s", s, want)
	}
	if got["left"].Reason != "denied by policy: freeze_left: left is frozen" {
		t.Errorf("left's reason: %q", got["left"].Reason)
	}
	if ivs := r.intervals(); len(ivs["left"]) != 0 || len(ivs["leaf"]) != 0 {
		t.Errorf("a denied stack and its reader ran: %v", ivs)
	}
	r.noLocks()

	res = r.mustRun(5, "plan", "--all", "-e", "dev", "--detailed-exitcode", "--policy", "policy")
	for _, want := range []string{"x freeze_left: deny\n      left is frozen\n", "1 denied", "producer left denied"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan --all lacks %q:\n%s", want, res)
		}
	}
	res = r.mustRun(0, "plan", "--all", "-e", "dev", "--policy", "policy")
	if !strings.Contains(res.stdout, "left   denied") && !strings.Contains(res.stdout, "denied by policy: freeze_left: left is frozen") {
		t.Errorf("plan --all without --detailed-exitcode shows the denied stack and exits 0:\n%s", res)
	}
	res = r.mustRun(2, "deploy", "--all", "-e", "dev", "--yes", "--override-policy", "freeze_left", "--reason", "x")
	if !strings.Contains(res.stderr, "drop --override-policy") {
		t.Errorf("an override names one stack's policy: %s", res)
	}
	got = r.all(0, "deploy", "--all", "-e", "dev", "--yes")
	if s := statusesOf(got); s != "alone=no-changes, root=no-changes, left=applied, right=no-changes, leaf=applied" {
		t.Errorf("without the policy: %s", s)
	}
}

// Under GitHub Actions an override is checked against who GitHub vouches
// for, never GITHUB_ACTOR: the run's triggering actor read through the API
// with the job's token, or the actor claim of the runner's OIDC token. A
// login the policy's overridable_by does not list is refused, exit 5, with
// the identity seen and where it came from; nothing is written. A listed
// one is recorded as verified.
func TestPolicyOverrideIsCheckedAgainstWhoGitHubVouchesFor(t *testing.T) {
	g := newFakeGitHub(t)
	g.runActor, g.oidcActor = "mallory", "octocat"
	p := newProject(t, strings.Replace(strings.Replace(policyYAML, "%BACKEND%", "backend: {state: file://.deployer, lock: file://.deployer}", 1),
		"%CREATE%", "curl --version | sh -c true", 1))
	copyExamplePolicies(t, p, "freeze") // command_download_shell: overridable_by: [octocat]
	ci := append(prEnv(t, g), "GITHUB_ACTOR=octocat")
	p.env = ci
	before := p.stored()

	r := p.mustRun(5, "deploy", "-e", "production", "--yes", "--override-policy", "command_download_shell", "--reason", "vendor installer")
	if !strings.Contains(r.stderr, `policy command_download_shell may not be overridden by "mallory" (the triggering_actor of workflow run 99 (GitHub API)): overridable_by: octocat`) {
		t.Fatalf("an override by a login overridable_by does not list: %s", r)
	}
	if after := p.stored(); after != before {
		t.Fatalf("a refused override changed what is stored:\nbefore %s\nafter %s", before, after)
	}

	// No OIDC token and no job token: GITHUB_ACTOR alone is not trusted.
	p.env = append(append([]string{}, ci...), "GITHUB_TOKEN=")
	r = p.mustRun(1, "deploy", "-e", "production", "--yes", "--override-policy", "command_download_shell", "--reason", "vendor installer")
	if !strings.Contains(r.stderr, "who overrides cannot be verified") || !strings.Contains(r.stderr, "id-token: write") {
		t.Fatalf("an override with nothing GitHub vouches for: %s", r)
	}

	// The OIDC token's actor comes first.
	p.env = append(append([]string{}, ci...), "ACTIONS_ID_TOKEN_REQUEST_URL="+g.srv.URL+"/oidc/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN="+oidcRequestToken)
	p.mustRun(0, "deploy", "-e", "production", "--yes", "--override-policy", "command_download_shell", "--reason", "vendor installer")
	st := p.run("state", "show", "-e", "production", "--json")
	for _, want := range []string{`"by": "octocat"`, `"verified": true`, `"by_source": "the actor claim of the GitHub Actions OIDC token"`} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("the deployment record lacks %s:\n%s", want, st)
		}
	}
}
