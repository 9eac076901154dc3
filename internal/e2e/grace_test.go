//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// graceYAML is a Command component whose TERM trap needs 5 s to clean up:
// it writes cleanup-started at once and cleanup-done at the end.
const graceYAML = `stack: graceful
environments: {dev: {}}
services:
  app:
    components:
      job:
        kind: Command
        command:
          create: trap 'touch cleanup-started; sleep 5; touch cleanup-done; exit 143' TERM; touch started; sleep 60 & wait
`

// After Ctrl-C a Command component gets its grace to clean up: 20 s from
// command.grace or from deploy --grace, so its 5 s cleanup finishes; with
// the default (3 s) it is killed before the cleanup ends. Either way the
// deployment is recorded as cancelled and deployer exits 130.
func TestCtrlCGivesCommandComponentsTheirGrace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		yaml     string
		flags    []string
		finishes bool
	}{
		{"command.grace", strings.Replace(graceYAML, "        command:\n", "        command:\n          grace: 20s\n", 1), nil, true},
		{"--grace", graceYAML, []string{"--grace", "20s"}, true},
		{"default", graceYAML, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, tc.yaml)
			d := p.start(append([]string{"deploy", "-e", "dev", "--yes"}, tc.flags...)...)
			exists := func(name string) bool {
				_, err := os.Stat(filepath.Join(p.dir, name))
				return err == nil
			}
			eventually(t, 20*time.Second, "app/job to start", func() bool { return exists("started") })
			if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the cleanup to start", func() bool { return exists("cleanup-started") })
			r := d.wait(t, 60*time.Second)
			if r.code != 130 {
				t.Fatalf("a cancelled deploy exits 130: %s", r)
			}
			if got := exists("cleanup-done"); got != tc.finishes {
				t.Errorf("cleanup finished: %v, want %v (5 s cleanup, grace %s)\n%s", got, tc.finishes, tc.name, r.stderr)
			}
			if st := p.state("graceful", "dev"); len(st.DeploymentHistory) == 0 || st.DeploymentHistory[0].Status != "cancelled" {
				t.Errorf("the deployment should be recorded as cancelled: %+v", st.DeploymentHistory)
			}
			if len(p.locks()) != 0 {
				t.Error("the cancelled deploy left its lock")
			}
		})
	}
}
