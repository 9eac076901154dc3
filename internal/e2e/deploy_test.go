//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// stepScript appends "NAME start/end NANOS" to events.log, sleeps while the
// file "slow" exists (seconds in $2), and writes its outputs.
const stepScript = `#!/bin/sh
name=$1
echo "$name start $(date +%s%N) ${RUN_TAG:-main}" >> events.log
echo $$ > "pid.$name"
if [ -f slow ]; then sleep "${2:-0}"; fi
echo "$name end $(date +%s%N) ${RUN_TAG:-main}" >> events.log
printf '{"name":"%s","deps":"%s"}' "$name" "$(env | grep -c '^DEPLOYER_DEP_')" > "$DEPLOYER_OUTPUTS"
`

const shopYAML = `stack: shop
backend:
  heartbeat_interval: 200ms
  stale_after: 1s
  lock_ttl: 5s
environments:
  dev: {}
  prod: {}
services:
  base:
    components:
      net:
        kind: Command
        config: {cidr: 10.0.0.0/16}
        command: {create: ./step.sh net 30, update: ./step.sh net 30, delete: ./step.sh net-delete}
  app:
    components:
      db:
        kind: Command
        depends_on: [base/net]
        config: {size: small}
        command: {create: ./step.sh db 30, update: ./step.sh db 30, delete: ./step.sh db-delete}
      api:
        kind: Command
        depends_on: [db]
        config: {replicas: 2, image: {tag: v1}}
        environments: {prod: {replicas: 5}}
        command: {create: ./step.sh api 30, update: ./step.sh api 30, delete: ./step.sh api-delete}
`

func newShop(t *testing.T) *project {
	p := newProject(t, shopYAML)
	p.write("step.sh", stepScript)
	return p
}

// events returns the names in events.log lines with the given phase, in order.
func (p *project) events(phase string) []string {
	data, err := os.ReadFile(filepath.Join(p.dir, "events.log"))
	if err != nil {
		return nil
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[1] == phase {
			names = append(names, f[0])
		}
	}
	return names
}

func TestDeployWritesVerifiedStateThenReportsNoChanges(t *testing.T) {
	p := newShop(t)
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, want := range []string{"+ net", "+ db", "+ api", "Plan: 3 to create"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r)
		}
	}
	if got := strings.Join(p.events("start"), ","); got != "net,db,api" {
		t.Errorf("components ran in order %s, want net,db,api (dependency order)", got)
	}
	st := p.state("shop", "dev")
	if st.Serial != 1 || len(st.Resources) != 3 || len(st.DeploymentHistory) != 1 || st.DeploymentHistory[0].Status != "success" {
		t.Fatalf("state after first deploy: serial %d, %d resources, history %+v", st.Serial, len(st.Resources), st.DeploymentHistory)
	}
	if out := st.Resources["app/api"].Outputs["name"]; out != "api" {
		t.Errorf("outputs of app/api = %v, want name=api", st.Resources["app/api"].Outputs)
	}
	if deps := st.Resources["app/api"].Outputs["deps"]; deps == "0" {
		t.Errorf("app/api saw no DEPLOYER_DEP_* variables from app/db")
	}
	snaps, _ := filepath.Glob(filepath.Join(p.dir, ".deployer/stacks/shop/dev/history/*-1.json"))
	if len(snaps) != 1 {
		t.Errorf("history snapshots of serial 1: %v", snaps)
	}
	p.mustRun(0, "state", "show", "-e", "dev") // verifies checksums
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks after deploy: %+v", locks)
	}

	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stdout, "No changes") {
		t.Errorf("second deploy should report no changes:\n%s", r)
	}
	if st := p.state("shop", "dev"); st.Serial != 1 {
		t.Errorf("a deploy without changes wrote serial %d", st.Serial)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

	p.write("deployer.yaml", strings.Replace(shopYAML, "size: small", "size: large", 1))
	r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "~ db") || !strings.Contains(r.stdout, "size") || !strings.Contains(r.stdout, "small") || !strings.Contains(r.stdout, "large") {
		t.Errorf("plan should show the update of db with size: small -> large:\n%s", r)
	}
	r = p.mustRun(0, "plan", "-e", "dev", "--json")
	var plan struct {
		Summary map[string]int `json:"summary"`
		Steps   []struct {
			Address string `json:"address"`
			Action  string `json:"action"`
			Diffs   []struct {
				Path string `json:"path"`
			} `json:"diffs"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, r)
	}
	var changed []string
	for _, s := range plan.Steps {
		if s.Action != "no-op" {
			changed = append(changed, s.Address+":"+s.Action)
			if len(s.Diffs) != 1 || s.Diffs[0].Path != "size" {
				t.Errorf("diffs of %s: %+v, want one on size", s.Address, s.Diffs)
			}
		}
	}
	if strings.Join(changed, ",") != "app/db:update" {
		t.Errorf("changed steps %v, want exactly app/db:update", changed)
	}
}

func TestSecondDeployFailsAtOnceWithHolderOrWaits(t *testing.T) {
	p := newShop(t)
	p.write("slow", "")
	first := p.start("deploy", "-e", "dev", "--yes", "--lock-timeout", "0")
	eventually(t, 20*time.Second, "the first deploy to start a component", func() bool { return len(p.events("start")) > 0 })

	r := p.mustRun(3, "deploy", "-e", "dev", "--yes")
	for _, want := range []string{"stack:shop:env:dev", "Held by:", "deployer unlock -s shop -e dev --force --lock-id"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("held-lock error lacks %q:\n%s", want, r)
		}
	}
	waiter := p.start("deploy", "-e", "dev", "--yes", "--lock-timeout", "60s")
	eventually(t, 20*time.Second, "the waiting deploy to report the holder", func() bool {
		return strings.Contains(waiter.errb.String(), "waiting for lock stack:shop:env:dev")
	})
	if err := os.Remove(filepath.Join(p.dir, "slow")); err != nil {
		t.Fatal(err)
	}
	if r := first.wait(t, 60*time.Second); r.code != 0 {
		t.Fatalf("first deploy: %s", r)
	}
	if r := waiter.wait(t, 60*time.Second); r.code != 0 || !strings.Contains(r.stdout, "No changes") {
		t.Fatalf("waiting deploy should run after the first and find no changes: %s", r)
	}
}

// interval is one component run from events.log.
type interval struct {
	start, end int64
	tag        string // RUN_TAG of the deployer process that ran it
}

func (p *project) intervals() map[string][]interval {
	data, _ := os.ReadFile(filepath.Join(p.dir, "events.log"))
	out := map[string][]interval{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 {
			continue
		}
		var ns int64
		for _, c := range f[2] {
			ns = ns*10 + int64(c-'0')
		}
		if f[1] == "start" {
			out[f[0]] = append(out[f[0]], interval{start: ns, tag: f[3]})
		} else if iv := out[f[0]]; len(iv) > 0 {
			iv[len(iv)-1].end = ns
		}
	}
	return out
}

func overlaps(a, b interval) bool { return a.start < b.end && b.start < a.end }

func TestComponentLocksOverlapButNeverWithTheStackLock(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	os.Remove(filepath.Join(p.dir, "events.log"))

	// Two component deploys of different components run at the same time.
	p.write("deployer.yaml", strings.NewReplacer("size: small", "size: large", "cidr: 10.0.0.0/16", "cidr: 10.1.0.0/16",
		"./step.sh db 30", "./step.sh db 2", "./step.sh net 30", "./step.sh net 2").Replace(shopYAML))
	p.write("slow", "")
	a := p.start("deploy", "-e", "dev", "--component", "app/db", "--yes", "--lock-timeout", "60s")
	b := p.start("deploy", "-e", "dev", "--component", "base/net", "--yes", "--lock-timeout", "60s")
	for _, r := range []result{a.wait(t, 60*time.Second), b.wait(t, 60*time.Second)} {
		if r.code != 0 {
			t.Fatalf("component deploy: %s", r)
		}
	}
	iv := p.intervals()
	if len(iv["db"]) != 1 || len(iv["net"]) != 1 || !overlaps(iv["db"][0], iv["net"][0]) {
		t.Fatalf("component deploys of app/db and base/net should overlap: %+v", iv)
	}
	st := p.state("shop", "dev")
	if st.Serial != 3 || st.Resources["app/db"].DesiredConfig["size"] != "large" || st.Resources["base/net"].DesiredConfig["cidr"] != "10.1.0.0/16" {
		t.Fatalf("both component deploys must land in state (serial 3): serial %d, db %v, net %v",
			st.Serial, st.Resources["app/db"].DesiredConfig, st.Resources["base/net"].DesiredConfig)
	}

	// A stack deploy and a component deploy never overlap. The component
	// deploy reads another config file (same state), so whichever runs
	// second still has work to do.
	os.Remove(filepath.Join(p.dir, "events.log"))
	fast := strings.NewReplacer("./step.sh db 30", "./step.sh db 1", "./step.sh net 30", "./step.sh net 1", "./step.sh api 30", "./step.sh api 1")
	p.write("deployer.yaml", fast.Replace(strings.NewReplacer("size: small", "size: medium", "cidr: 10.0.0.0/16", "cidr: 10.2.0.0/16",
		"replicas: 2", "replicas: 3").Replace(shopYAML)))
	p.write("b.yaml", fast.Replace(strings.Replace(shopYAML, "replicas: 2", "replicas: 4", 1)))
	s := p.start("deploy", "-e", "dev", "--yes", "--lock-timeout", "60s")
	p.env = []string{"RUN_TAG=component"}
	c := p.start("deploy", "--config", "b.yaml", "-e", "dev", "--component", "app/api", "--yes", "--lock-timeout", "60s")
	for _, r := range []result{s.wait(t, 90*time.Second), c.wait(t, 90*time.Second)} {
		if r.code != 0 {
			t.Fatalf("deploy: %s", r)
		}
	}
	var stackRuns, compRuns []interval
	for name, list := range p.intervals() {
		for _, iv := range list {
			if iv.tag == "component" {
				compRuns = append(compRuns, iv)
			} else {
				stackRuns = append(stackRuns, iv)
			}
			_ = name
		}
	}
	if len(stackRuns) < 2 || len(compRuns) != 1 {
		t.Fatalf("want the stack deploy's runs and one component run: stack %+v, component %+v", stackRuns, compRuns)
	}
	for _, sr := range stackRuns {
		if overlaps(sr, compRuns[0]) {
			t.Fatalf("stack-level and component-level deploys overlapped: stack %+v, component %+v", stackRuns, compRuns)
		}
	}
}

// killedMidApply deploys shop/dev, then starts a deploy of replicas 4 and
// kills it with SIGKILL while app/api runs (the file "slow" keeps the steps
// sleeping): the stack lock is left behind with the dead deploy's record.
func killedMidApply(t *testing.T) (*project, *bgRun) {
	t.Helper()
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(shopYAML, "replicas: 2", "replicas: 4", 1))
	p.write("slow", "")
	os.Remove(filepath.Join(p.dir, "events.log"))
	d := p.start("deploy", "-e", "dev", "--yes")
	eventually(t, 20*time.Second, "the deploy to start app/api", func() bool {
		return strings.Contains(strings.Join(p.events("start"), ","), "api")
	})
	step, err := strconv.Atoi(strings.TrimSpace(string(p.read("pid.api"))))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 10*time.Second)
	// The component's process group dies with deployer (Pdeathsig and the
	// watchdog): its script never finishes after deployer is gone.
	eventually(t, 10*time.Second, "the killed deploy's step to die", func() bool { return !alive(step) })
	if slices.Contains(p.events("end"), "api") {
		t.Errorf("app/api's step finished after deployer was killed:\n%s", p.read("events.log"))
	}
	return p, d
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// abandonedIn returns the deployments `history --json` shows as abandoned.
func (p *project) abandonedIn(env string) []historyRow {
	p.t.Helper()
	r := p.mustRun(0, "history", "-e", env, "--json")
	var rows []historyRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		p.t.Fatalf("history --json: %v\n%s", err, r)
	}
	var out []historyRow
	for _, row := range rows {
		if row.Status == "abandoned" {
			out = append(out, row)
		}
	}
	return out
}

func TestKilledDeployLeavesStaleLockThatForceUnlockBreaks(t *testing.T) {
	p, d := killedMidApply(t)

	locks := p.locks()
	if len(locks) != 1 || locks[0].Metadata.PID != d.cmd.Process.Pid || locks[0].Metadata.Operation != "deploy" || locks[0].Level != "stack" {
		t.Fatalf("state locks should show the killed holder (pid %d): %+v", d.cmd.Process.Pid, locks)
	}
	r := p.mustRun(0, "state", "locks")
	for _, want := range []string{"stack:shop:env:dev", "deploy", "ago"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("state locks lacks %q:\n%s", want, r)
		}
	}
	eventually(t, 10*time.Second, "the lock to turn STALE", func() bool { return p.locks()[0].Status == "STALE" })
	if r := p.mustRun(0, "state", "locks"); !strings.Contains(r.stdout, "STALE (pid not running)") {
		t.Errorf("state locks should say STALE (pid not running):\n%s", r)
	}
	if !p.locks()[0].PIDNotRunning {
		t.Errorf("state locks --json should say pid_not_running: %+v", p.locks())
	}

	r = p.mustRun(2, "unlock", "-e", "dev", "--force") // no terminal: must ask for --yes
	if !strings.Contains(r.stderr, "--yes") || len(p.locks()) != 1 {
		t.Fatalf("unlock without a terminal must refuse and keep the lock: %s", r)
	}
	r = p.mustRun(0, "unlock", "-e", "dev", "--force", "--yes")
	if !strings.Contains(r.stderr, locks[0].LockID) || len(p.locks()) != 0 {
		t.Fatalf("unlock --force --yes should show and break lock %s: %s", locks[0].LockID, r)
	}
	// The broken holder's deployment is recorded as abandoned (serial 2).
	if ab := p.abandonedIn("dev"); len(ab) != 1 || ab[0].DeploymentID != locks[0].Metadata.DeploymentID || ab[0].Serial != 2 {
		t.Fatalf("history should show deployment %s as abandoned at serial 2: %+v", locks[0].Metadata.DeploymentID, ab)
	}
	os.Remove(filepath.Join(p.dir, "slow"))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	st := p.state("shop", "dev")
	if st.Serial != 3 || st.Resources["app/api"].DesiredConfig["replicas"] != float64(4) {
		t.Fatalf("after the recovery deploy: serial %d (want 3), api %v", st.Serial, st.Resources["app/api"].DesiredConfig)
	}
	p.mustRun(0, "state", "show", "-e", "dev")
}

// historyRow is one entry of `deployer history --json`.
type historyRow struct {
	Serial       int64  `json:"serial"`
	Snapshot     string `json:"snapshot"`
	DeploymentID string `json:"deployment_id"`
	Type         string `json:"type"`
	Status       string `json:"status"`
	RestoredFrom int64  `json:"restored_from"`
	Uncommitted  bool   `json:"uncommitted"`
}

func TestHistoryAndRestore(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	first := p.state("shop", "dev")
	p.write("deployer.yaml", strings.Replace(shopYAML, "tag: v1", "tag: v2", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(shopYAML, "tag: v1", "tag: v3", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	r := p.mustRun(0, "history", "-e", "dev", "--json")
	var hist []historyRow
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 3 || hist[0].Serial != 3 || hist[2].DeploymentID == "" {
		t.Fatalf("history should list 3 deploys newest first: %v\n%s", err, r)
	}

	r = p.mustRun(0, "restore", "-e", "dev", "--serial", "1", "--yes")
	st := p.state("shop", "dev")
	if st.Serial != 4 || st.Lineage != first.Lineage {
		t.Fatalf("restore should write serial 4 of the same lineage: %d %s", st.Serial, st.Lineage)
	}
	a, _ := json.Marshal(first.Resources)
	b, _ := json.Marshal(st.Resources)
	if string(a) != string(b) {
		t.Errorf("resources of serial 4 differ from serial 1:\n%s\n%s", a, b)
	}
	r = p.mustRun(0, "history", "-e", "dev", "--json")
	_ = json.Unmarshal([]byte(r.stdout), &hist)
	if len(hist) != 4 || hist[0].Type != "restore" || hist[0].RestoredFrom != 1 {
		t.Fatalf("history should show the restore: %s", r)
	}
	r = p.mustRun(0, "history", "-e", "dev")
	if !strings.Contains(r.stdout, "restore (from 1)") {
		t.Errorf("human history lacks the restore:\n%s", r)
	}
	p.mustRun(2, "restore", "-e", "dev", "--serial", "1") // no terminal, no --yes
}

func TestTamperedStateIsDetectedAndNeverOverwritten(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	path := filepath.Join(p.dir, ".deployer/stacks/shop/dev/state.json")
	data := p.read(".deployer/stacks/shop/dev/state.json")
	i := strings.Index(string(data), `"small"`)
	data[i+1] = 'S' // one byte
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"plan", "-e", "dev"},
		{"deploy", "-e", "dev", "--yes"},
		{"destroy", "-e", "dev", "--yes"},
		{"state", "show", "-e", "dev"},
		{"history", "-e", "dev"},
	} {
		r := p.mustRun(4, args...)
		if !strings.Contains(r.stderr, path) || strings.Count(r.stderr, "sha256:") < 2 {
			t.Errorf("%v: the error should name %s and both digests:\n%s", args, path, r)
		}
	}
	if got := p.read(".deployer/stacks/shop/dev/state.json"); string(got) != string(data) {
		t.Fatal("a command wrote over the tampered state")
	}
	if len(p.locks()) != 0 {
		t.Error("a failed command left its lock behind")
	}
	// restore is the one command that may replace it.
	p.mustRun(0, "restore", "-e", "dev", "--serial", "1", "--yes")
	p.mustRun(0, "state", "show", "-e", "dev")
}

func TestBadNamesAndYAMLTouchNothing(t *testing.T) {
	p := newShop(t)
	for _, args := range [][]string{
		{"deploy", "-e", "../x", "--yes"},
		{"deploy", "-e", "a:b", "--yes"},
		{"deploy", "-e", "Prod", "--yes"},
		{"deploy", "-e", "", "--yes"},
		{"plan", "-s", "../x", "-e", "dev"},
		{"deploy", "-e", "dev", "--component", "app/Api", "--yes"},
		{"deploy", "-e", "dev", "--service", "a:b", "--yes"},
		{"unlock", "-e", "../x", "--force", "--yes"},
		{"state", "locks", "-s", "Bad Name"},
		{"lock", "exec", "--key", "../x", "--", "true"},
	} {
		r := p.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "Error:") {
			t.Errorf("%q: want exit 2 with a clear error, got %s", args, r)
		}
	}
	r := p.run("deploy", "-e", "staging", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "staging") || !strings.Contains(r.stderr, "dev") {
		t.Errorf("unknown environment should be refused naming the known ones: %s", r)
	}
	p.write("deployer.yaml", "stack: shop\nservices:\n  app: [unclosed\n")
	r = p.run("plan", "-e", "dev")
	if r.code != 1 || !strings.Contains(r.stderr, "deployer.yaml") || !strings.Contains(r.stderr, "line") {
		t.Errorf("malformed YAML: want exit 1 naming the file and line, got %s", r)
	}
	p.write("deployer.yaml", strings.Replace(shopYAML, "depends_on: [db]", "depends_on: [dbb]", 1))
	r = p.run("plan", "-e", "dev")
	if r.code != 1 || !strings.Contains(r.stderr, `services.app.components.api.depends_on[0]`) || !strings.Contains(r.stderr, `"db"`) {
		t.Errorf("unknown dependency: want the YAML path and a suggestion, got %s", r)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".deployer")); !os.IsNotExist(err) {
		t.Errorf("bad input created .deployer (err=%v)", err)
	}
}

// A deploy killed between the history snapshot and state.json (docs/design.md#state-writes writes
// the snapshot first) leaves a snapshot that never became state.json. The
// test plants two such snapshots as that crash would: one of the next serial,
// and an older duplicate of the current serial left by an earlier attempt.
func TestHistoryMarksSnapshotsThatNeverBecameState(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(shopYAML, "tag: v1", "tag: v2", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	dir := filepath.Join(p.dir, ".deployer/stacks/shop/dev/history")
	committed, _ := filepath.Glob(filepath.Join(dir, "*-2.json"))
	if len(committed) != 1 {
		t.Fatalf("snapshots of serial 2: %v", committed)
	}
	doc, err := os.ReadFile(committed[0])
	if err != nil {
		t.Fatal(err)
	}
	info, _ := statestore.ParseSnapshotName(filepath.Base(committed[0]))
	for _, name := range []string{
		statestore.SnapshotName(info.Time.Add(time.Millisecond), 3), // crashed before state.json
		statestore.SnapshotName(info.Time.Add(-time.Second), 2),     // an earlier attempt at serial 2
	} {
		if err := os.WriteFile(filepath.Join(dir, name), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	r := p.mustRun(0, "history", "-e", "dev", "--json")
	var hist []historyRow
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 4 {
		t.Fatalf("history should list 4 snapshots: %v\n%s", err, r)
	}
	want := []struct {
		serial      int64
		uncommitted bool
	}{{3, true}, {2, false}, {2, true}, {1, false}}
	for i, w := range want {
		h := hist[i]
		if h.Serial != w.serial || h.Uncommitted != w.uncommitted {
			t.Errorf("entry %d: serial %d uncommitted %v, want %d %v (%s)", i, h.Serial, h.Uncommitted, w.serial, w.uncommitted, h.Snapshot)
		}
		if w.uncommitted && (h.Status != "uncommitted" || h.DeploymentID != "") {
			t.Errorf("entry %d (%s) should show status uncommitted and no deployment: %+v", i, h.Snapshot, h)
		}
		if !w.uncommitted && (h.Status != "success" || h.DeploymentID == "") {
			t.Errorf("entry %d (%s) should show its deployment: %+v", i, h.Snapshot, h)
		}
	}
	if hist[1].Snapshot != filepath.Base(committed[0]) {
		t.Errorf("serial 2 should be the snapshot state.json was written with, %s, not %s", filepath.Base(committed[0]), hist[1].Snapshot)
	}
	r = p.mustRun(0, "history", "-e", "dev")
	if !strings.Contains(r.stdout, "uncommitted") {
		t.Errorf("human history does not mark the uncommitted snapshots:\n%s", r)
	}
	// restore --timestamp takes the state as it was then: serial 2, not the
	// later snapshot of serial 3 that never became state.json.
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339)
	p.mustRun(0, "restore", "-e", "dev", "--timestamp", at, "--yes")
	st := p.state("shop", "dev")
	if st.Serial != 3 || len(st.DeploymentHistory) == 0 || st.DeploymentHistory[0].RestoredFrom != 2 {
		t.Fatalf("restore --timestamp %s should write serial 3 restored from 2: serial %d, %+v", at, st.Serial, st.DeploymentHistory)
	}
	r = p.mustRun(0, "history", "-e", "dev", "--json")
	hist = nil
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 5 {
		t.Fatalf("history should list 5 snapshots: %v\n%s", err, r)
	}
	if hist[0].Serial != 3 || hist[0].Uncommitted || hist[0].Status != "success" || hist[1].Serial != 3 || !hist[1].Uncommitted {
		t.Errorf("the restore's serial 3 should be committed and the crashed one still marked: %+v", hist[:2])
	}
	// The next deploy continues the serial.
	p.write("deployer.yaml", strings.Replace(shopYAML, "tag: v1", "tag: v3", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if st := p.state("shop", "dev"); st.Serial != 4 {
		t.Errorf("next deploy should write serial 4, got %d", st.Serial)
	}
}

// A holder killed with kill -9 leaves a lock that, once expired
// (lock_ttl after its last heartbeat), the next deploy takes over by itself,
// with nothing lost and the serial continuing.
func TestKilledHolderIsTakenOverAfterExpiry(t *testing.T) {
	p, d := killedMidApply(t)
	os.Remove(filepath.Join(p.dir, "slow"))

	dead := p.locks()[0].Metadata.DeploymentID
	r := p.mustRun(3, "deploy", "-e", "dev", "--yes") // still within lock_ttl (5 s)
	if !strings.Contains(r.stderr, strconv.Itoa(d.cmd.Process.Pid)) {
		t.Errorf("the refused deploy should name the killed holder (pid %d):\n%s", d.cmd.Process.Pid, r)
	}
	killed := time.Now()
	p.mustRun(0, "deploy", "-e", "dev", "--yes", "--lock-timeout", "20s")
	if waited := time.Since(killed); waited < 2*time.Second {
		t.Errorf("the lock was taken after %s, before it could have expired", waited)
	}
	st := p.state("shop", "dev")
	if st.Serial != 3 || st.Resources["app/api"].DesiredConfig["replicas"] != float64(4) || len(st.Resources) != 3 {
		t.Fatalf("after the takeover: serial %d (want 3: the abandoned record, then the deploy), %d resources, api %v", st.Serial, len(st.Resources), st.Resources["app/api"].DesiredConfig)
	}
	if ab := p.abandonedIn("dev"); len(ab) != 1 || ab[0].DeploymentID != dead {
		t.Errorf("history should show the killed deployment %s as abandoned: %+v", dead, ab)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("no lock should be left: %+v", locks)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode") // nothing left to do
}
