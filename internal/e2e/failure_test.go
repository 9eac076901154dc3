//go:build unix

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// failingCreateYAML: app/ok is created, app/web's create prints a long
// line and an escape sequence on stderr, then fails.
const failingCreateYAML = `stack: shop
environments:
  dev: {}
services:
  app:
    components:
      ok:
        kind: Command
        command: {create: "echo '{}' > $DEPLOYER_OUTPUTS", delete: "true"}
      web:
        kind: Command
        depends_on: [ok]
        command: {create: ./web.sh, delete: "true"}
`

const failingWebScript = `#!/bin/sh
echo "creating bucket $(printf 'x%.0s' $(seq 1 300))" >&2
printf '\033[31mERROR: quota exceeded for region\033[0m\n' >&2
exit 3
`

// A failed deployment says why in history (a line under its row, one line,
// escapes neutralised, long errors shortened in the middle; error in
// --json), and the component whose create failed shows in state show.
func TestFailedDeploymentShowsItsErrorInHistoryAndStateShow(t *testing.T) {
	p := newProject(t, failingCreateYAML)
	p.write("web.sh", failingWebScript)
	p.mustRun(1, "deploy", "-e", "dev", "--yes")

	var doc struct {
		DeploymentHistory []struct {
			Error string `json:"error"`
		} `json:"deployment_history"`
	}
	if err := json.Unmarshal(p.read(filepath.Join(".deployer/stacks/shop/dev/state.json")), &doc); err != nil {
		t.Fatal(err)
	}
	recorded := doc.DeploymentHistory[0].Error
	if !strings.Contains(recorded, "component app/web: create command") {
		t.Fatalf("the deployment record's error: %q", recorded)
	}

	h := p.mustRun(0, "history", "-e", "dev")
	lines := strings.Split(strings.TrimSuffix(h.stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "failed") || !strings.HasPrefix(lines[2], "  error: component app/web: create command") {
		t.Fatalf("history: want the header, the failed row and its error under it:\n%s", h)
	}
	errLine := lines[2]
	if strings.ContainsRune(errLine, '\x1b') || !strings.Contains(errLine, "ERROR: quota exceeded for region") || !strings.Contains(errLine, " … ") {
		t.Fatalf("history's error line: want it escaped, shortened in the middle, ending with stderr: %q", errLine)
	}
	if n := len([]rune(strings.TrimPrefix(errLine, "  error: "))); n > 200 {
		t.Fatalf("history's error line has %d characters, want at most 200: %q", n, errLine)
	}

	var entries []struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal([]byte(p.mustRun(0, "history", "-e", "dev", "--json").stdout), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Status != "failed" || entries[0].Error != recorded {
		t.Fatalf("history --json: want the record's error whole, got %+v", entries)
	}

	s := p.mustRun(0, "state", "show", "-e", "dev")
	if !rowWith(s.stdout, "app/web", "failed (create)") || !rowWith(s.stdout, "app/ok", "ready") {
		t.Fatalf("state show: want app/web listed as failed (create) beside app/ok:\n%s", s)
	}
	if !strings.Contains(s.stdout, "\nLast deployment dep-") || !strings.Contains(s.stdout, "failed:\n  component app/web: create command") ||
		!strings.Contains(s.stdout, "Not created (no state entry; the next deploy creates them): app/web\n") {
		t.Fatalf("state show: want the failed deployment's error under the table:\n%s", s)
	}

	// Once web's create succeeds, the failure is history, not state.
	p.write("web.sh", "#!/bin/sh\necho '{}' > \"$DEPLOYER_OUTPUTS\"\n")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	s = p.mustRun(0, "state", "show", "-e", "dev")
	if strings.Contains(s.stdout, "Last deployment") || !rowWith(s.stdout, "app/web", "ready") {
		t.Fatalf("state show after a successful deploy:\n%s", s)
	}
	if h := p.mustRun(0, "history", "-e", "dev"); strings.Count(h.stdout, "  error: ") != 1 {
		t.Fatalf("history: want the error under the failed deployment only:\n%s", h)
	}
}

// rowWith reports whether a line of out starts with first and holds want.
func rowWith(out, first, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, first+" ") && strings.Contains(l, want) {
			return true
		}
	}
	return false
}
