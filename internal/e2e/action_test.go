//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// runner is one job on a GitHub-hosted runner: the variables a real
// ubuntu-latest runner sets for a step, with its file commands in a
// temporary directory.
type runner struct {
	t         *testing.T
	workspace string
	temp      string
	step      int
	output    string // GITHUB_OUTPUT of the current step
	summary   string // GITHUB_STEP_SUMMARY (one job summary file per step)
}

func newRunner(t *testing.T, workspace string) *runner {
	root := t.TempDir()
	r := &runner{t: t, workspace: workspace, temp: filepath.Join(root, "_temp")}
	if err := os.MkdirAll(filepath.Join(r.temp, "_runner_file_commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// env returns the step's environment: the runner's variables and the
// action's inputs (INPUT_* as action.yml passes them).
func (r *runner) env(inputs map[string]string) []string {
	r.step++
	fc := filepath.Join(r.temp, "_runner_file_commands")
	r.output = filepath.Join(fc, fmt.Sprintf("set_output_%d", r.step))
	r.summary = filepath.Join(fc, fmt.Sprintf("step_summary_%d", r.step))
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=",
		"CI=true", "GITHUB_ACTIONS=true",
		"GITHUB_ACTION=__run_2", "GITHUB_ACTION_PATH=" + actionPath(r.t), "GITHUB_ACTION_REPOSITORY=deployer-dev/deployer",
		"GITHUB_ACTOR=octocat", "GITHUB_ACTOR_ID=583231", "GITHUB_API_URL=https://api.github.com",
		"GITHUB_BASE_REF=", "GITHUB_HEAD_REF=", "GITHUB_EVENT_NAME=push",
		"GITHUB_EVENT_PATH=" + filepath.Join(r.temp, "_github_workflow", "event.json"),
		"GITHUB_GRAPHQL_URL=https://api.github.com/graphql", "GITHUB_JOB=deploy",
		"GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main", "GITHUB_REF_PROTECTED=true", "GITHUB_REF_TYPE=branch",
		"GITHUB_REPOSITORY=acme/infra", "GITHUB_REPOSITORY_ID=123456789", "GITHUB_REPOSITORY_OWNER=acme",
		"GITHUB_RETENTION_DAYS=90", "GITHUB_RUN_ATTEMPT=1", "GITHUB_RUN_ID=1658821493", "GITHUB_RUN_NUMBER=42",
		"GITHUB_SERVER_URL=https://github.com", "GITHUB_SHA=ffac537e6cbbf934b08745a378932722df287a53",
		"GITHUB_TRIGGERING_ACTOR=octocat", "GITHUB_WORKFLOW=deploy", "GITHUB_WORKFLOW_REF=acme/infra/.github/workflows/deploy.yml@refs/heads/main",
		"GITHUB_WORKFLOW_SHA=ffac537e6cbbf934b08745a378932722df287a53", "GITHUB_WORKSPACE=" + r.workspace,
		"GITHUB_ENV=" + filepath.Join(fc, fmt.Sprintf("set_env_%d", r.step)),
		"GITHUB_PATH=" + filepath.Join(fc, fmt.Sprintf("add_path_%d", r.step)),
		"GITHUB_STATE=" + filepath.Join(fc, fmt.Sprintf("save_state_%d", r.step)),
		"GITHUB_OUTPUT=" + r.output, "GITHUB_STEP_SUMMARY=" + r.summary,
		"RUNNER_ARCH=X64", "RUNNER_ENVIRONMENT=github-hosted", "RUNNER_NAME=GitHub Actions 2", "RUNNER_OS=Linux",
		"RUNNER_TEMP=" + r.temp, "RUNNER_TOOL_CACHE=/opt/hostedtoolcache", "RUNNER_WORKSPACE=" + filepath.Dir(r.workspace),
		"DEPLOYER_BIN=" + bin, "DEPLOYER_ACTION_PATH=" + actionPath(r.t),
	}
	for _, in := range []string{"command", "stack", "environment", "lock-timeout", "args", "comment-on-pr", "all", "changed-since",
		"matrix", "run-id", "run-attempt", "upstream", "wait-timeout"} {
		env = append(env, "INPUT_"+strings.ToUpper(strings.ReplaceAll(in, "-", "_"))+"="+inputs[in])
	}
	return env
}

func actionPath(t *testing.T) string {
	p, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runStep runs the action's run script (action.yml's second step) in the
// workspace and returns its result and what it wrote to the step's files.
func (r *runner) runStep(inputs map[string]string) (res result, outputs, summary string) {
	r.t.Helper()
	cmd := exec.Command("bash", filepath.Join(actionPath(r.t), "scripts", "github-action", "run.sh"))
	cmd.Dir = r.workspace
	cmd.Env = r.env(inputs)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	res.stdout, res.stderr = out.String(), errb.String()
	o, _ := os.ReadFile(r.output)
	s, _ := os.ReadFile(r.summary)
	return res, string(o), string(s)
}

// commands returns the workflow command lines (::...) of a log.
func commands(log string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(log, "\n") {
		if strings.HasPrefix(l, "::") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// copyQuickstart copies examples/quickstart into a fresh workspace.
func copyQuickstart(t *testing.T) *project {
	t.Helper()
	p := &project{t: t, dir: filepath.Join(t.TempDir(), "infra")}
	src := filepath.Join(actionPath(t), "examples", "quickstart")
	for _, name := range []string{"deployer.yaml", "scripts/build.sh", "scripts/check.sh", "scripts/lib.sh",
		"scripts/publish.sh", "scripts/remove.sh", "scripts/render.sh", "scripts/site.sh"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		p.write(name, string(data))
	}
	return p
}

const fileStateWarning = "::warning title=State will be lost with the runner::the state backend is file://.deployer on a CI runner: " +
	"the state, its history and (with a file:// lock) the locks vanish with the runner, and the next run starts from nothing. " +
	"Keep state in S3 and locks in DynamoDB: set backend.state: s3://BUCKET and backend.lock: dynamodb://TABLE in deployer.yaml " +
	"(or DEPLOYER_BACKEND_STATE and DEPLOYER_BACKEND_LOCK), create them with deployer backend init; see docs/github-actions.md\n"

const quickstartPlanTable = "| Component | Kind | Action | Changed fields |\n|---|---|---|---|\n" +
	"| `config/render` | Command | + create | `app_name`: `\"hello\"`<br>`greeting`: `\"Hello from deployer\"`<br>`log_level`: `\"debug\"`<br>`command.create`: `\"sh scripts/render.sh\"`<br>`command.delete`: `\"sh scripts/remove.sh config\"`<br>`command.timeout`: `\"1m0s\"`<br>`command.update`: `\"sh scripts/render.sh\"` |\n" +
	"| `app/build` | Command | + create | `version`: `\"1.0.0\"`<br>`command.create`: `\"sh scripts/build.sh\"`<br>`command.delete`: `\"sh scripts/remove.sh build\"`<br>`command.timeout`: `\"2m0s\"`<br>`command.update`: `\"sh scripts/build.sh\"` |\n" +
	"| `app/check` | Command | + create | `min_bytes`: `64`<br>`command.create`: `\"sh scripts/check.sh\"`<br>`command.delete`: `\"sh scripts/remove.sh check\"`<br>`command.timeout`: `\"1m0s\"`<br>`command.update`: `\"sh scripts/check.sh\"` |\n" +
	"| `docs/site` | Command | + create | `title`: `\"Hello service\"`<br>`command.create`: `\"sh scripts/site.sh\"`<br>`command.delete`: `\"sh scripts/remove.sh site\"`<br>`command.update`: `\"sh scripts/site.sh\"` |\n" +
	"| `docs/publish` | Command | + create | `channel`: `\"beta\"`<br>`command.create`: `\"sh scripts/publish.sh\"`<br>`command.delete`: `\"sh scripts/remove.sh published\"`<br>`command.update`: `\"sh scripts/publish.sh\"` |\n\n" +
	"**Plan:** 5 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged.\n\n"

// TestActionPlanThenDeployQuickstart runs the action's script as a runner
// would: plan (saved to RUNNER_TEMP), then deploy of that plan, and checks
// the job summary, the step outputs and the workflow commands byte for byte.
func TestActionPlanThenDeployQuickstart(t *testing.T) {
	p := copyQuickstart(t)
	r := newRunner(t, p.dir)

	res, outputs, summary := r.runStep(map[string]string{"command": "plan", "environment": "dev"})
	if res.code != 0 {
		t.Fatalf("plan step: %s", res)
	}
	planJSON := filepath.Join(r.temp, "deployer-plan-1658821493-1-deploy.json")
	if diff := cmp.Diff("changes=true\nserial=0\nexit-code=0\nplan-json="+planJSON+"\n", outputs); diff != "" {
		t.Errorf("plan step outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("### deployer plan: quickstart/dev\n\n"+quickstartPlanTable, summary); diff != "" {
		t.Errorf("plan step summary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(fileStateWarning, commands(res.stdout+res.stderr)); diff != "" {
		t.Errorf("plan step workflow commands (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(res.stdout, "deployer plan --environment dev --out "+planJSON+"\n") {
		t.Errorf("plan step should echo the command it runs:\n%s", res.stdout)
	}

	res, outputs, summary = r.runStep(map[string]string{"command": "deploy", "environment": "dev", "lock-timeout": "1m", "args": "--plan " + planJSON})
	if res.code != 0 {
		t.Fatalf("deploy step: %s", res)
	}
	var hist []struct {
		Serial       int64   `json:"serial"`
		DeploymentID string  `json:"deployment_id"`
		Duration     float64 `json:"duration_seconds"`
	}
	h := p.mustRun(0, "history", "-e", "dev", "--json")
	if err := json.Unmarshal([]byte(h.stdout), &hist); err != nil || len(hist) != 1 || !strings.HasPrefix(hist[0].DeploymentID, "dep-") {
		t.Fatalf("history after the deploy step: %v\n%s", err, h)
	}
	dep := hist[0]
	wantOutputs := fmt.Sprintf("changes=true\nserial=1\ndeployment-id=%s\nexit-code=0\n", dep.DeploymentID)
	if diff := cmp.Diff(wantOutputs, outputs); diff != "" {
		t.Errorf("deploy step outputs (-want +got):\n%s", diff)
	}
	wantSummary := "### deployer deploy: quickstart/dev\n\n" + quickstartPlanTable +
		"**Result:** success: 5 created, 0 updated, 0 replaced, 0 deleted, 0 failed.\n\n" +
		"| Deployment | Serial | Duration |\n|---|---|---|\n" +
		fmt.Sprintf("| `%s` | 1 | %.1fs |\n\n", dep.DeploymentID, dep.Duration)
	if diff := cmp.Diff(wantSummary, summary); diff != "" {
		t.Errorf("deploy step summary (-want +got):\n%s", diff)
	}
	var groups strings.Builder
	groups.WriteString(fileStateWarning)
	for _, c := range []string{"config/render", "app/build", "app/check", "docs/site", "docs/publish"} {
		groups.WriteString("::group::" + c + "\n::endgroup::\n")
	}
	if diff := cmp.Diff(groups.String(), commands(res.stdout+res.stderr)); diff != "" {
		t.Errorf("deploy step workflow commands (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.stderr, "::group::app/build\n[app/build] create: sh scripts/build.sh\n") {
		t.Errorf("a component's output should sit in its group:\n%s", res.stderr)
	}

	// Outside GitHub Actions nothing of this is written.
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "channel: beta", "channel: stable", 1))
	local := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if strings.Contains(local.stdout+local.stderr, "::") {
		t.Errorf("workflow commands outside GitHub Actions:\n%s", local)
	}
}

// A held lock fails the step with exit code 3, an ::error naming the
// holder and a summary with the unlock command.
func TestActionHeldLock(t *testing.T) {
	p := newProject(t, `stack: hold
environments: {dev: {}}
services:
  app:
    components:
      wait:
        kind: Command
        config: {v: 1}
        command: {create: "touch started; while [ ! -e release ]; do sleep 0.05; done", delete: "true"}
`)
	p.env = []string{"GITHUB_ACTIONS=true", "GITHUB_RUN_ID=1658821400"}
	holder := p.start("deploy", "-e", "dev", "--yes")
	eventually(t, 30*time.Second, "the first deploy to hold the lock and run", func() bool {
		_, err := os.Stat(filepath.Join(p.dir, "started"))
		return err == nil
	})
	var locks struct {
		Locks []struct {
			LockID   string `json:"lockId"`
			LockedBy string `json:"lockedBy"`
			LockedAt int64  `json:"lockedAt"`
			Metadata struct {
				DeploymentID string `json:"deployment_id"`
			} `json:"metadata"`
		} `json:"locks"`
	}
	l := p.mustRun(0, "state", "locks", "--json")
	if err := json.Unmarshal([]byte(l.stdout), &locks); err != nil || len(locks.Locks) != 1 {
		t.Fatalf("state locks: %v\n%s", err, l)
	}
	rec := locks.Locks[0]

	r := newRunner(t, p.dir)
	res, outputs, summary := r.runStep(map[string]string{"command": "deploy", "environment": "dev"})
	if res.code != 3 {
		t.Fatalf("deploy step: want exit 3 (lock held), got %s", res)
	}
	if diff := cmp.Diff("exit-code=3\n", outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	unlock := "deployer unlock -s hold -e dev --force --lock-id " + rec.LockID
	wantSummary := "### deployer deploy: lock held\n\n" +
		fmt.Sprintf("Lock `stack:hold:env:dev` is held by **github-actions-run-1658821400** (deploy `%s`) since %s.\n\n",
			rec.Metadata.DeploymentID, time.Unix(rec.LockedAt, 0).UTC().Format(time.RFC3339)) +
		"Wait for it with `--lock-timeout` (the action's `lock-timeout` input), or, if the holder is gone, break it with:\n\n" +
		"```sh\n" + unlock + "\n```\n\n"
	if diff := cmp.Diff(wantSummary, summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	cmds := strings.SplitAfter(commands(res.stdout+res.stderr), "\n")
	const title = "::error title=Lock stack%3Ahold%3Aenv%3Adev held by github-actions-run-1658821400::lock stack:hold:env:dev is held; another operation is in progress:%0A"
	if len(cmds) != 3 || !strings.HasPrefix(cmds[1], title) || !strings.HasSuffix(cmds[1], "break the lock with:%0A  "+unlock+"\n") {
		t.Errorf("workflow commands: want the file:// warning and one ::error naming the holder with the unlock command, got:\n%s", strings.Join(cmds, ""))
	}

	p.write("release", "")
	if res := holder.wait(t, 60*time.Second); res.code != 0 {
		t.Fatalf("holder: %s", res)
	}
}

// A failed component is one ::error naming it, the summary counts it and
// lists it, and secrets stay masked in the summary.
func TestActionFailedComponentAndMaskedSecrets(t *testing.T) {
	p := newProject(t, `stack: fail
environments: {dev: {}}
services:
  app:
    components:
      db:
        kind: Command
        config: {admin_password: hunter2, size: 1}
        command: {create: "true", delete: "true"}
      api:
        kind: Command
        depends_on: [db]
        config: {replicas: 2}
        command: {create: "echo boom >&2; exit 7", delete: "true"}
`)
	dir := t.TempDir()
	summaryPath, outputPath := filepath.Join(dir, "summary"), filepath.Join(dir, "output")
	p.env = []string{"GITHUB_ACTIONS=true", "CI=true", "GITHUB_RUN_ID=7", "DEPLOYER_SECRETS_PASSPHRASE=action test", "GITHUB_STEP_SUMMARY=" + summaryPath, "GITHUB_OUTPUT=" + outputPath}
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	cmds := commands(r.stdout + r.stderr)
	wantErr := "::error title=Component app/api failed::"
	if strings.Count(cmds, "::error") != 1 || !strings.Contains(cmds, wantErr) {
		t.Errorf("want exactly one ::error, naming app/api, got:\n%s", cmds)
	}
	data, _ := os.ReadFile(summaryPath)
	summary := string(data)
	if strings.Contains(summary, "hunter2") {
		t.Errorf("the summary shows a secret:\n%s", summary)
	}
	for _, want := range []string{
		"| `app/db` | Command | + create | `admin_password`: `(sensitive)`<br>`size`: `1`<br>`command.create`: `\"true\"`<br>`command.delete`: `\"true\"` |\n",
		"**Result:** failed: 1 created, 0 updated, 0 replaced, 0 deleted, 1 failed.\n",
		"Failed components:\n\n- `app/api`: ",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	out, _ := os.ReadFile(outputPath)
	if !strings.HasPrefix(string(out), "changes=true\nserial=1\ndeployment-id=dep-") {
		t.Errorf("outputs:\n%s", out)
	}
}

// releaseMirror makes a directory laid out as GitHub Releases serve
// deployer VERSION (vVERSION/ARCHIVE, vVERSION/checksums.txt and its
// signature) with the binary the e2e tests built as the linux/arch
// archive, checksums.txt signed with a new test key.
func releaseMirror(t *testing.T, version, arch string) release {
	t.Helper()
	r := release{mirror: t.TempDir(), key: newReleaseKey(t)}
	rel := filepath.Join(r.mirror, "v"+version)
	stage := t.TempDir()
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := "deployer_" + version + "_linux_" + arch + ".tar.gz"
	// cp and tar, not os.ReadFile: the binary is large, and this process's
	// peak memory is inherited by the processes it forks (hostile_test.go).
	script := fmt.Sprintf("cp %s %s/deployer && tar -czf %s/%s -C %s deployer && cd %s && sha256sum %s > checksums.txt",
		bin, stage, rel, archive, stage, rel, archive)
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	r.archive, r.checksums = filepath.Join(rel, archive), filepath.Join(rel, "checksums.txt")
	r.key.sign(t, r.checksums)
	return r
}

// The action's install step with a version downloads the release archive
// .goreleaser.yaml makes, checks it against checksums.txt and reports the
// binary's path (here from a file:// mirror of the release).
func TestActionInstallsARelease(t *testing.T) {
	rel := releaseMirror(t, "1.2.3", "amd64")

	out, got, _, err := rel.install(t, "v1.2.3")
	if err != nil {
		t.Fatalf("install step: %v\n%s", err, out)
	}
	if !strings.HasPrefix(got, "path=") || !strings.HasSuffix(got, filepath.Join("_temp", "deployer-1.2.3", "deployer")+"\n") {
		t.Errorf("install step outputs %q, want path=RUNNER_TEMP/deployer-1.2.3/deployer\n%s", got, out)
	}
}

// The stack and environment inputs reach only the commands that take them:
// `backend init` through the action, as docs/github-actions.md suggests,
// works with the environment input set, and says it was not passed.
func TestActionPassesTargetInputsOnlyToCommandsThatTakeThem(t *testing.T) {
	p := copyQuickstart(t)
	r := newRunner(t, p.dir)
	res, outputs, _ := r.runStep(map[string]string{"command": "backend init", "stack": "quickstart", "environment": "dev"})
	if res.code != 0 || !strings.Contains(outputs, "exit-code=0") {
		t.Fatalf("backend init through the action: %s\noutputs: %s", res, outputs)
	}
	if !strings.Contains("\n"+res.stdout, "\ndeployer backend init\n") {
		t.Errorf("backend init should run without target flags:\n%s", res.stdout)
	}
	for _, want := range []string{
		"::notice title=deployer action::deployer backend init takes no --stack: the stack input (quickstart) is not passed to it\n",
		"::notice title=deployer action::deployer backend init takes no --environment: the environment input (dev) is not passed to it\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the step should say %q:\n%s", want, res.stdout)
		}
	}
	res, _, _ = r.runStep(map[string]string{"command": "state locks", "stack": "quickstart", "environment": "dev"})
	if res.code != 0 || !strings.HasPrefix(res.stdout, "deployer state locks --stack quickstart --environment dev\n") {
		t.Errorf("state locks takes both inputs: %s", res)
	}
}
