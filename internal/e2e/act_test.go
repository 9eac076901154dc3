//go:build unix

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// actYAML is the stack of the act workflow: two Command components in dev;
// in staging app/broken fails (exit 3), as a component with a bug would.
const actYAML = `stack: shop
backend: {state: file://.deployer, lock: file://.deployer}
environments:
  dev: {}
  staging: {}
services:
  app:
    components:
      db:
        kind: Command
        config: {size: 1}
        command: {create: "echo created db; echo '{\"host\":\"db.local\"}' > \"$DEPLOYER_OUTPUTS\"", delete: "true"}
      broken:
        kind: Command
        depends_on: [db]
        config: {fail: false}
        environments: {staging: {fail: true}}
        command:
          create: if [ "$DEPLOYER_CONFIG_FAIL" = true ]; then echo "cannot reach the database" >&2; exit 3; fi
          delete: "true"
`

// actWorkflow runs the action four times, as a repository would use it:
// plan with --detailed-exitcode, deploy of the saved plan, a second plan
// (no changes), and a deploy that fails on a component; a last step prints
// the step outputs for the test to read.
const actWorkflow = `name: deploy
on: push
env:
  DEPLOYER_RELEASES_URL: file://%s
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: plan
        uses: ./action
        with: {version: 1.2.3, command: plan, environment: dev, working-directory: infra, args: --detailed-exitcode}
      - id: deploy
        uses: ./action
        with:
          version: 1.2.3
          command: deploy
          environment: dev
          working-directory: infra
          args: --plan ${{ steps.plan.outputs.plan-json }}
      - id: replan
        uses: ./action
        with: {version: 1.2.3, command: plan, environment: dev, working-directory: infra, args: --detailed-exitcode}
      - id: broken
        uses: ./action
        continue-on-error: true
        with: {version: 1.2.3, command: deploy, environment: staging, working-directory: infra}
      - run: |
          echo "RESULT plan exit-code=${{ steps.plan.outputs.exit-code }} changes=${{ steps.plan.outputs.changes }} serial=${{ steps.plan.outputs.serial }} plan-json=${{ steps.plan.outputs.plan-json != '' }}"
          echo "RESULT deploy exit-code=${{ steps.deploy.outputs.exit-code }} changes=${{ steps.deploy.outputs.changes }} serial=${{ steps.deploy.outputs.serial }} deployment-id=${{ startsWith(steps.deploy.outputs.deployment-id, 'dep-') }}"
          echo "RESULT replan exit-code=${{ steps.replan.outputs.exit-code }} changes=${{ steps.replan.outputs.changes }} serial=${{ steps.replan.outputs.serial }}"
          echo "RESULT broken outcome=${{ steps.broken.outcome }} exit-code=${{ steps.broken.outputs.exit-code }} changes=${{ steps.broken.outputs.changes }}"
`

// The action run by a real workflow runner: nektos/act in host mode (no
// Docker) runs the workflow above on a repository holding action.yml and
// its scripts, with deployer installed by the action's install step from a
// release mirror. The test reads act's log: the step outputs, the job
// summaries and the ::error annotation of the failed component.
func TestActWorkflowPlanDeployReplanAndFailure(t *testing.T) {
	act := testenv.Require(t, testenv.Act, "act")
	testenv.RequirePlatform(t, runtime.GOOS == "linux", "act's host mode runs the workflow on this machine; the release mirror holds a linux build")
	ws := filepath.Join(t.TempDir(), "repo")
	writeAction(t, filepath.Join(ws, "action"))

	rel := releaseMirror(t, "1.2.3", runtime.GOARCH) // act's RUNNER_ARCH is this machine's
	sh := func(dir, script string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	for name, content := range map[string]string{
		"infra/deployer.yaml":          actYAML,
		".github/workflows/deploy.yml": fmt.Sprintf(actWorkflow, rel.mirror),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(ws, "git init -q . && git add -A && git -c user.email=ci@example.com -c user.name=ci commit -qm 'infra'")

	home := t.TempDir() // act's cache and settings (~/.cache/act, ~/.actrc) stay in the test
	cmd := exec.Command(act, append([]string{"push", "-P", "ubuntu-latest=-self-hosted", "--actor", "octocat"}, rel.actArgs(t)...)...)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "DEPLOYER_SECRETS_PASSPHRASE=", "GOFLAGS=" + os.Getenv("GOFLAGS")}
	out, err := cmd.CombinedOutput()
	log := string(out)
	if err != nil {
		t.Fatalf("act push: %v\n%s", err, log)
	}

	for _, want := range []string{
		"RESULT plan exit-code=2 changes=true serial=0 plan-json=true",
		"RESULT deploy exit-code=0 changes=true serial=1 deployment-id=true",
		"RESULT replan exit-code=0 changes=false serial=1",
		"RESULT broken outcome=failure exit-code=1 changes=true",
		// The job summaries (act logs what each step appended).
		"Summary - ### deployer plan: shop/dev\n\n| Component | Kind | Action | Changed fields |\n|---|---|---|---|\n| `app/db` | Command | + create |",
		"Summary - ### deployer deploy: shop/dev\n\n",
		"**Result:** success: 2 created, 0 updated, 0 replaced, 0 deleted, 0 failed.",
		"Summary - ### deployer plan: shop/dev\n\nNo changes. Infrastructure matches the configuration.",
		"Summary - ### deployer deploy: shop/staging\n\n",
		"**Result:** failed: 1 created, 0 updated, 0 replaced, 0 deleted, 1 failed.",
		// The failed component's annotation, with its stderr.
		"::error title=Component app/broken failed::component app/broken: create command",
		"exited with code 3; last stderr lines: cannot reach the database",
		"🏁  Job succeeded",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("act's log lacks %q", want)
		}
	}
	if strings.Count(log, "::error title=Component") != 1 {
		t.Errorf("want exactly one component ::error annotation")
	}
	if t.Failed() {
		t.Logf("act's log:\n%s", log)
	}
}
