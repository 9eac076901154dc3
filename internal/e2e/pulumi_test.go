//go:build unix

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// The real-CLI tests of the Pulumi engine (docs/pulumi.md): the built
// deployer binary drives the Pulumi CLI that scripts/test-servers/pulumi.sh
// builds, with the project's own provider pulumi-resource-deployertest on
// PATH. They never skip in CI.

// pulumiProject is a directory holding deployer stacks in subdirectories
// that share the state backend ../.deployer, like examples/pulumi-local.
type pulumiProject struct {
	t   *testing.T
	cli string
	dir string
}

func newPulumiProject(t *testing.T) *pulumiProject {
	t.Helper()
	cli, _ := testenv.Pulumi(t)
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "deployer-e2e")
	return &pulumiProject{t: t, cli: cli, dir: t.TempDir()}
}

// stack returns the deployer project of one subdirectory, writing yaml.
func (pp *pulumiProject) stack(sub, yaml string) *project {
	pp.t.Helper()
	p := &project{t: pp.t, dir: filepath.Join(pp.dir, sub)}
	p.write("deployer.yaml", yaml)
	return p
}

// pulumiCmd is the Pulumi CLI run against the Pulumi backend of stack/env.
func (pp *pulumiProject) pulumiCmd(stack, env string, args ...string) *exec.Cmd {
	cmd := exec.Command(pp.cli, append(args, "--non-interactive")...)
	cmd.Dir = pp.t.TempDir()
	cmd.Env = append(os.Environ(), "PULUMI_BACKEND_URL=file://"+filepath.Join(pp.dir, ".deployer", "stacks", stack, env, "pulumi"))
	return cmd
}

// pulumi runs the Pulumi CLI against the Pulumi backend of stack/env.
func (pp *pulumiProject) pulumi(stack, env string, args ...string) string {
	pp.t.Helper()
	out, err := pp.pulumiCmd(stack, env, args...).CombinedOutput()
	if err != nil {
		pp.t.Fatalf("pulumi %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// pulumiComponents returns the addresses of the deployer components whose
// resources Pulumi's state of stack/env holds ("service/component" from the
// resources' names: every resource sits at the stack's root, named after its
// component, docs/pulumi.md#resource-layout), sorted, each once.
func (pp *pulumiProject) pulumiComponents(stack, env string) []string {
	pp.t.Helper()
	exp := pp.export(stack, env)
	if len(exp.Pending) > 0 {
		pp.t.Errorf("Pulumi's state of %s/%s keeps pending operations: %v", stack, env, exp.Pending)
	}
	return slices.Sorted(maps.Keys(exp.held()))
}

// stateOf reads .deployer/stacks/{stack}/{env}/state.json of the project.
func (pp *pulumiProject) stateOf(stack, env string) stateDoc {
	pp.t.Helper()
	var st stateDoc
	data, err := os.ReadFile(filepath.Join(pp.dir, ".deployer", "stacks", stack, env, "state.json"))
	if err != nil {
		pp.t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		pp.t.Fatal(err)
	}
	return st
}

// rawState returns the bytes of deployer's state document of stack/env.
func (pp *pulumiProject) rawState(stack, env string) string {
	pp.t.Helper()
	data, err := os.ReadFile(filepath.Join(pp.dir, ".deployer", "stacks", stack, env, "state.json"))
	if err != nil {
		pp.t.Fatal(err)
	}
	return string(data)
}

// stateListsPulumi checks that deployer's state of stack/env lists every
// component whose resources Pulumi's state holds, and that Pulumi keeps no
// pending operation.
func (pp *pulumiProject) stateListsPulumi(stack, env string) {
	pp.t.Helper()
	st := pp.stateOf(stack, env)
	exp := pp.export(stack, env)
	for _, op := range exp.Pending {
		pp.t.Errorf("Pulumi's state of %s/%s keeps a pending %s of %s", stack, env, op.Type, op.Resource.URN)
	}
	for c := range exp.held() {
		if _, ok := st.Resources[c]; !ok {
			pp.t.Errorf("Pulumi's stack %s/%s holds %s but deployer's state does not list it", stack, env, c)
		}
	}
}

func readExample(t *testing.T, sub string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "pulumi-local", sub, "deployer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var deploySummary = regexp.MustCompile(`(\d+) created, (\d+) updated(?:, (\d+) replaced)?, (\d+) deleted`)

// TestRealPulumiLocalExample runs examples/pulumi-local as its README does:
// base; app reading base through StackReference; redeploy = no changes;
// plan --refresh = no drift; state show; pulumi stack ls on the backend; an
// update; a replace reported as one; destroy app, destroy base.
func TestRealPulumiLocalExample(t *testing.T) {
	pp := newPulumiProject(t)
	base := pp.stack("base", readExample(t, "base"))
	app := pp.stack("app", readExample(t, "app"))

	r := base.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[1] != "2" {
		t.Fatalf("base deploy should create 2 components: %s", r)
	}
	bst := pp.stateOf("pulumi-local-base", "dev")
	petName := bst.Resources["base/pet"].Outputs["properties"].(map[string]any)["name"].(string)
	password := bst.Resources["base/db"].Outputs["properties"].(map[string]any)["password"]
	if pw, ok := password.(map[string]any); !ok || pw["deployer:secret"] == nil || pw["ciphertext"] == nil {
		t.Errorf("the Secret resource's password is not encrypted in state: %#v", password)
	}
	plain := secretPassword(t, base.mustRun(0, "state", "show", "-e", "dev", "--json", "--show-secrets", "--yes").stdout)
	if raw := pp.rawState("pulumi-local-base", "dev"); strings.Contains(raw, plain) {
		t.Errorf("the state document holds the secret password in plain text")
	}

	app.mustRun(0, "deploy", "-e", "dev", "--yes")
	ast := pp.stateOf("pulumi-local-app", "dev")
	appName, _ := ast.Resources["app/pet"].Outputs["properties"].(map[string]any)["name"].(string)
	if !strings.HasPrefix(appName, petName+"-") {
		t.Errorf("app/pet name = %q, want base's %q as prefix (read through StackReference)", appName, petName)
	}

	if r := app.mustRun(0, "deploy", "-e", "dev", "--yes"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("a redeploy should report no changes: %s", r)
	}
	if r := app.mustRun(0, "plan", "-e", "dev", "--preview"); !strings.Contains(r.stdout, "Pulumi changes: same") ||
		regexp.MustCompile(`Pulumi changes:.*(create|update|delete|replace)`).MatchString(r.stdout) {
		t.Errorf("plan --preview of an unchanged stack should show Pulumi changing nothing: %s", r)
	}
	// base's pet is replaced (a new id and name): app's plan sees it when
	// planning (exit 2), and one deploy of app makes its name follow.
	base.write("deployer.yaml", strings.Replace(readExample(t, "base"), `properties: {length: 2, separator: "-"}`,
		`properties: {length: 2, separator: "-", keepers: {generation: 2}}`, 1))
	r = base.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[3] != "1" {
		t.Errorf("changing base's keepers should replace base/pet: %s", r)
	}
	bst = pp.stateOf("pulumi-local-base", "dev")
	petName = bst.Resources["base/pet"].Outputs["properties"].(map[string]any)["name"].(string)
	r = app.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "~ pet (PulumiResource) update") || !strings.Contains(r.stdout, "(inputs).upstream/base.outputs.base/pet.id") {
		t.Errorf("app's plan after base/pet was replaced should update app/pet with (inputs) diffs: %s", r)
	}
	app.mustRun(0, "deploy", "-e", "dev", "--yes")
	ast = pp.stateOf("pulumi-local-app", "dev")
	if appName, _ = ast.Resources["app/pet"].Outputs["properties"].(map[string]any)["name"].(string); !strings.HasPrefix(appName, petName+"-") {
		t.Errorf("after one deploy app/pet name = %q, want base's new %q as prefix", appName, petName)
	}
	app.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	pp.stateListsPulumi("pulumi-local-app", "dev")

	for _, p := range []*project{base, app} {
		if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
			t.Errorf("plan --refresh right after a deploy should find no drift: %s", r)
		}
	}
	r = base.mustRun(0, "state", "show", "-e", "dev")
	if strings.Contains(r.stdout, plain) {
		t.Errorf("state show prints the secret password: %s", r)
	}
	if out := pp.pulumi("pulumi-local-app", "dev", "stack", "ls", "--all"); !strings.Contains(out, "dev") {
		t.Errorf("pulumi stack ls on the app's backend lists no dev stack:\n%s", out)
	}

	// An in-place update, then a change Pulumi can only make by replacing.
	appYAML := readExample(t, "app")
	app.write("deployer.yaml", strings.Replace(appYAML, "length: 1", "length: 2", 1))
	r = app.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[2] != "1" || m[3] != "" {
		t.Errorf("changing length should update app/pet in place: %s", r)
	}
	oldID := pp.stateOf("pulumi-local-app", "dev").Resources["app/pet"].Outputs["id"]
	app.write("deployer.yaml", strings.Replace(appYAML, "length: 1", "length: 2\n            keepers: {generation: 2}", 1))
	r = app.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[3] != "1" {
		t.Errorf("changing keepers should be reported as a replace: %s", r)
	}
	if newID := pp.stateOf("pulumi-local-app", "dev").Resources["app/pet"].Outputs["id"]; newID == oldID {
		t.Errorf("a replace should give app/pet a new id, still %v", newID)
	}
	if r := app.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") {
		t.Errorf("plan --refresh after a replace should find no drift: %s", r)
	}
	pp.stateListsPulumi("pulumi-local-app", "dev")

	// No provider internals anywhere in deployer's state and history.
	grep := exec.Command("grep", "-r", "__pulumi", filepath.Join(pp.dir, ".deployer", "stacks"), "--include=*.json", "--exclude-dir=pulumi")
	if out, err := grep.CombinedOutput(); err == nil {
		t.Errorf("deployer's state holds Pulumi internals:\n%s", out)
	}

	app.mustRun(0, "destroy", "-e", "dev", "--yes")
	base.mustRun(0, "destroy", "-e", "dev", "--yes")
	for _, s := range []string{"pulumi-local-app", "pulumi-local-base"} {
		if comps := pp.pulumiComponents(s, "dev"); len(comps) != 0 {
			t.Errorf("Pulumi's stack %s/dev still holds %v after destroy", s, comps)
		}
		if st := pp.stateOf(s, "dev"); len(st.Resources) != 0 {
			t.Errorf("deployer's state of %s/dev still lists %d resources after destroy", s, len(st.Resources))
		}
	}
}

const failingYAML = `stack: failing
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      name:
        kind: PulumiResource
        config: {type: "deployertest:index:RandomName", properties: {length: 1}}
      bad:
        kind: PulumiResource
        depends_on: [app/name]
        config: {type: "deployertest:index:Failing", properties: {fail: true, message: "quota exceeded for widgets"}}
`

// TestRealPulumiFailingResource: a resource whose create fails fails the
// deploy with Pulumi's diagnostic, not its whole output; what succeeded is
// recorded, the lock released, and the next deploy retries only the failure.
func TestRealPulumiFailingResource(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("failing", failingYAML)
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "quota exceeded for widgets") || strings.Contains(r.stderr, "stdout:") {
		t.Errorf("the error should be Pulumi's diagnostic, shortened: %s", r)
	}
	st := pp.stateOf("failing", "dev")
	if st.Resources["app/name"].Status != "ready" || st.Resources["app/bad"].Status == "ready" {
		t.Errorf("state should hold app/name ready and app/bad not ready: %+v", st.Resources)
	}
	if st.DeploymentHistory[0].Status != "failed" {
		t.Errorf("the deployment should be recorded as failed: %+v", st.DeploymentHistory[0])
	}
	if len(p.locks()) != 0 {
		t.Error("a failed deploy left its lock")
	}
	pp.stateListsPulumi("failing", "dev")
	p.write("deployer.yaml", strings.Replace(failingYAML, "fail: true", "fail: false", 1))
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stdout, "bad (PulumiResource)") || strings.Contains(r.stdout, " name ") || strings.Contains(r.stderr, "app-name updat") {
		t.Errorf("the retry should apply app/bad only, leaving app/name as it is: %s", r)
	}
}

// TestRealPulumiMissingPlugin: a component whose provider plugin is not
// installed is refused before any lock is taken or state written, with the
// command that installs it.
func TestRealPulumiMissingPlugin(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("missing", `stack: missing
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      thing:
        kind: PulumiResource
        config: {type: "nosuchcloud:index:Thing", version: "1.2.3", properties: {size: 1}}
`)
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "pulumi plugin install resource nosuchcloud 1.2.3") {
		t.Errorf("the error should give the install command: %s", r)
	}
	if strings.Contains(r.stderr, "Acquired lock") {
		t.Errorf("the plugin check should come before the lock: %s", r)
	}
	if _, err := os.Stat(filepath.Join(pp.dir, ".deployer", "stacks", "missing", "dev", "state.json")); !os.IsNotExist(err) {
		t.Errorf("a refused deploy wrote state: %v", err)
	}
}

const pulumiSlowYAML = `stack: slow
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      name:
        kind: PulumiResource
        config: {type: "deployertest:index:RandomName", properties: {length: 1}}
      slow:
        kind: PulumiResource
        depends_on: [app/name]
        config: {type: "deployertest:index:Slow", properties: {seconds: SECONDS, startedFile: STARTED, ignoreCancel: IGNORE}}
`

// startSlow starts a deploy whose second resource takes an hour to create
// (and, with ignoreCancel, ignores Pulumi's request to stop) and returns
// once that create has started, with the provider's pid.
func startSlow(t *testing.T, pp *pulumiProject, ignoreCancel bool) (*project, *bgRun, int) {
	t.Helper()
	started := filepath.Join(pp.dir, "slow-started")
	p := pp.stack("slow", strings.NewReplacer("SECONDS", "3600", "STARTED", started, "IGNORE", strconv.FormatBool(ignoreCancel)).Replace(pulumiSlowYAML))
	d := p.start("deploy", "-e", "dev", "--yes")
	var pid int
	eventually(t, 3*time.Minute, "the slow create to start", func() bool {
		data, err := os.ReadFile(started)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return p, d, pid
}

// afterCancel checks what every cancel must leave: exit 130, no lock, a
// state listing every component Pulumi holds, no pending operation, and a
// next deploy that succeeds without `pulumi cancel` by hand.
func afterCancel(t *testing.T, pp *pulumiProject, p *project, r result) {
	t.Helper()
	if r.code != 130 {
		t.Fatalf("a cancelled deploy exits 130: %s", r)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Fatalf("the cancelled deploy left its lock: %+v", locks)
	}
	st := pp.stateOf("slow", "dev")
	if st.DeploymentHistory[0].Status != "cancelled" {
		t.Errorf("the deployment should be recorded as cancelled: %+v", st.DeploymentHistory[0])
	}
	if _, ok := st.Resources["app/name"]; !ok {
		t.Errorf("app/name was created before the cancel but state does not list it: %s", r)
	}
	pp.stateListsPulumi("slow", "dev")
	p.write("deployer.yaml", strings.NewReplacer("SECONDS", "0", "STARTED", filepath.Join(pp.dir, "again"), "IGNORE", "false").Replace(pulumiSlowYAML))
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if st := pp.stateOf("slow", "dev"); st.Resources["app/slow"].Status != "ready" || st.Resources["app/name"].Status != "ready" {
		t.Errorf("the deploy after the cancel should finish both: %+v\n%s", st.Resources, r)
	}
	pp.stateListsPulumi("slow", "dev")
}

// TestRealPulumiCtrlC: one SIGINT mid-create cancels Pulumi's update gracefully.
func TestRealPulumiCtrlC(t *testing.T) {
	pp := newPulumiProject(t)
	p, d, _ := startSlow(t, pp, false)
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	afterCancel(t, pp, p, d.wait(t, 3*time.Minute))
}

// TestRealPulumiDoubleCtrlC: a second SIGINT kills Pulumi and its provider at
// once; deployer still clears Pulumi's lock and pending create (reporting
// it), records what was done and releases its own lock.
func TestRealPulumiDoubleCtrlC(t *testing.T) {
	pp := newPulumiProject(t)
	p, d, providerPID := startSlow(t, pp, true)
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "deployer to report the cancel", func() bool { return strings.Contains(d.errb.String(), "cancelling") })
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := d.wait(t, 3*time.Minute)
	eventually(t, 30*time.Second, "the provider process to be gone", func() bool { return gone(providerPID) })
	if !strings.Contains(r.stderr, "app-slow") || !strings.Contains(r.stderr, "pending") {
		t.Errorf("the pending create of app/slow should be reported: %s", r)
	}
	afterCancel(t, pp, p, r)
}

// gone reports whether process pid has ended (a zombie waiting for a
// parent that does not reap counts as ended).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return err == nil && strings.Contains(string(data), ") Z ")
}

// secretPassword finds the plain value of the first "password" field in
// the JSON of state show --show-secrets: a string, or deployer's
// {secret: true, value} marker around one.
func secretPassword(t *testing.T, stateJSON string) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(stateJSON), &doc); err != nil {
		t.Fatalf("state show --json: %v\n%s", err, stateJSON)
	}
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case map[string]any:
			if pw, ok := v["password"]; ok {
				if s, ok := pw.(string); ok && s != "" {
					return s
				}
				if m, ok := pw.(map[string]any); ok {
					if s, ok := m["value"].(string); ok && s != "" {
						return s
					}
				}
			}
			for _, c := range v {
				if s := find(c); s != "" {
					return s
				}
			}
		case []any:
			for _, c := range v {
				if s := find(c); s != "" {
					return s
				}
			}
		}
		return ""
	}
	pw := find(doc)
	if pw == "" {
		t.Fatalf("state show --show-secrets printed no password:\n%s", stateJSON)
	}
	return pw
}

// TestRealPulumiSecretsByKeyNameAreEncryptedInPulumisBackend: a property
// secret only by its key name (apiKey) reaches Pulumi marked secret, so
// neither Pulumi's backend nor deployer's state holds it in plain text.
func TestRealPulumiSecretsByKeyNameAreEncryptedInPulumisBackend(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("keyname", `stack: keyname
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      name:
        kind: PulumiResource
        config: {type: "deployertest:index:RandomName", properties: {length: 1, apiKey: "${env:E2E_API_KEY}", nested: {db_password: "${env:E2E_DB_PW}"}}}
`)
	const key, pw = "ak-e2e-6d1f0c9b77", "pw-e2e-0c2d9f1a55"
	p.env = []string{"E2E_API_KEY=" + key, "E2E_DB_PW=" + pw, "DEPLOYER_SECRETS_PASSPHRASE=deployer-e2e"}
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	// Pulumi's own streamed output carries a prefix on every line.
	if !strings.Contains(r.stderr, "\n[pulumi] Resources:") || strings.Contains(r.stderr, "\r") {
		t.Errorf("Pulumi's output lines should start with [pulumi]:\n%s", r)
	}
	for _, v := range []string{key, pw} {
		if strings.Contains(r.stdout+r.stderr, v) {
			t.Errorf("the output shows %s:\n%s", v, r)
		}
		grepTree(t, pp.dir, v) // deployer's state, history and Pulumi's backend
	}
	if out := pp.pulumi("keyname", "dev", "stack", "export", "--stack", "organization/keyname/dev"); strings.Contains(out, key) {
		t.Errorf("Pulumi's state holds the key in plain text")
	}
}
