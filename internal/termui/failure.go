package termui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// errorLineMax is how many characters of a deployment's error a table
// shows (history, state show): its start names the component and the
// command, its end holds the last stderr lines, so a longer one keeps both
// ends. --json prints it whole.
const errorLineMax = 200

// ErrorLine is a deployment's error on one line of a table: whitespace
// runs (the error's own newlines included) become one space, control
// characters are escaped (it may quote a command's output), and an error
// over errorLineMax characters keeps its start and its end around " … ".
func ErrorLine(msg string) string {
	r := []rune(sanitize.Line(strings.Join(strings.Fields(msg), " ")))
	if len(r) <= errorLineMax {
		return string(r)
	}
	head := errorLineMax * 2 / 5
	tail := errorLineMax - head - 3
	return string(r[:head]) + " … " + string(r[len(r)-tail:])
}

// PrintFailure writes, under state show's table, the newest deployment when
// it did not succeed: its id, type, status, time and error, and the
// components whose create failed (they have no state entry).
func PrintFailure(w io.Writer, f *stateops.Failure) {
	d := f.Deployment
	fmt.Fprintf(w, "\nLast deployment %s (%s, %s) %s:\n  %s\n", OrDash(sanitize.Line(d.DeploymentID)), OrDash(sanitize.Line(string(d.Type))),
		d.Timestamp.UTC().Format(time.RFC3339), sanitize.Line(string(d.Status)), OrDash(ErrorLine(d.Error)))
	if len(f.NotCreated) > 0 {
		fmt.Fprintf(w, "Not created (no state entry; the next deploy creates them): %s\n", sanitize.Line(strings.Join(f.NotCreated, ", ")))
	}
	if len(f.NotImported) > 0 {
		fmt.Fprintf(w, "Not imported (no state entry): %s\n", sanitize.Line(strings.Join(f.NotImported, ", ")))
	}
}
