//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pushYAML: api's update changes state.json behind deployer's back when
// the file tamper exists, so that deploy's state write loses its
// compare-and-swap and goes to the errored file.
const pushYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      api:
        kind: Command
        config: {v: VERSION}
        command:
          create: "cat >/dev/null"
          update: 'cat >/dev/null; if [ -f tamper ]; then echo " " >> .deployer/stacks/qs/dev/state.json; fi'
          delete: "true"
`

// An errored state written from serial 1, pushed after a deploy reached
// serial 2, is refused: it would drop the component created at serial 2.
// --force writes it, with a history record and an audit event.
func TestStatePushRefusesAFileNotWrittenFromTheStoredSerial(t *testing.T) {
	p := newProject(t, strings.Replace(pushYAML, "VERSION", "1", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("tamper", "")
	p.write("deployer.yaml", strings.Replace(pushYAML, "VERSION", "2", 1))
	r := p.mustRun(4, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "deployer-errored-qs-dev.json") {
		t.Fatalf("want an errored state:\n%s", r)
	}
	os.Remove(filepath.Join(p.dir, "tamper"))
	p.write("deployer.yaml", strings.Replace(pushYAML, "VERSION", "2", 1)+`      web:
        kind: Command
        command: {create: "cat >/dev/null", delete: "true"}
`)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	audit := filepath.Join(p.dir, "audit.log")

	r = p.mustRun(4, "state", "push", "deployer-errored-qs-dev.json", "-e", "dev", "--yes", "--audit-log", audit)
	for _, want := range []string{"serial 2, so it was written from serial 1, but the stored state is at serial 2", "--force"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("state push of an old errored file should say %q:\n%s", want, r)
		}
	}
	st := readState(t, p)
	if st.Serial != 2 || st.Resources["s/web"] == nil {
		t.Fatalf("the refused push changed the state: serial %d, resources %v", st.Serial, st.Resources)
	}

	p.mustRun(0, "state", "push", "deployer-errored-qs-dev.json", "-e", "dev", "--yes", "--force", "--audit-log", audit)
	st = readState(t, p)
	if st.Serial != 3 {
		t.Errorf("the forced push should write serial 3, got %d", st.Serial)
	}
	last := st.History[0] // newest first
	if last.Type != "state-push-forced" || last.Serial != 3 {
		t.Errorf("the forced push should be recorded in the history: %+v", last)
	}
	var forced map[string]any
	for _, ev := range auditEvents(t, audit) {
		if ev["event"] == "state.push_forced" {
			forced = ev
		}
	}
	if forced == nil || forced["file_serial"] != float64(2) || forced["stored_serial"] != float64(2) {
		t.Errorf("the forced push should be audited with the serials it overrode: %v", forced)
	}
}

type pushedState struct {
	Serial    int64                      `json:"serial"`
	Resources map[string]json.RawMessage `json:"resources"`
	History   []struct {
		Type   string `json:"type"`
		Serial int64  `json:"serial"`
	} `json:"deployment_history"`
}

func readState(t *testing.T, p *project) pushedState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".deployer", "stacks", "qs", "dev", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st pushedState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}
