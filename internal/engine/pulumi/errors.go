package pulumi

import (
	"errors"
	"strings"
)

// ShortError is an Automation API error cut down to the lines that matter
// (docs/pulumi.md, "Errors"): the diagnostics Pulumi printed for each
// resource ("deployertest:index:Failing (app-bad): error: ..."), else the
// "error:" lines of its stderr, else the first line. Unwrap gives the full
// error, with Pulumi's whole stdout and stderr.
type ShortError struct {
	Msg string
	Err error
}

func (e *ShortError) Error() string { return e.Msg }
func (e *ShortError) Unwrap() error { return e.Err }

// shorten returns err as a *ShortError when it carries Pulumi's output.
func shorten(err error) error {
	if err == nil {
		return nil
	}
	var se *ShortError
	if errors.As(err, &se) {
		return err
	}
	full := err.Error()
	_, rest, ok := strings.Cut(full, "\ncode: ")
	if !ok {
		return err
	}
	stdout, stderr := rest, ""
	if _, after, ok := strings.Cut(rest, "\nstdout: "); ok {
		stdout = after
	}
	if before, after, ok := strings.Cut(stdout, "\nstderr: "); ok {
		stdout, stderr = before, after
	}
	lines := diagnostics(stdout)
	if len(lines) == 0 {
		for _, l := range strings.Split(stderr, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "error:") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		first, _, _ := strings.Cut(full, "\n")
		lines = []string{first}
	}
	return &ShortError{Msg: strings.Join(lines, "\n"), Err: err}
}

// diagnostics returns the error diagnostics of Pulumi's "Diagnostics:"
// section as "resource: error: message" lines, leaving out the stack's own
// summary line ("update failed"), which says nothing the others do not.
func diagnostics(stdout string) []string {
	_, section, ok := strings.Cut(stdout, "\nDiagnostics:\n")
	if !ok {
		return nil
	}
	var out []string
	var resource string
	inError := false
	for _, l := range strings.Split(section, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			break // the next section: Outputs:, Resources:, Duration:
		}
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "":
			inError = false
		case strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "    ") && strings.HasSuffix(trimmed, ":"):
			resource, inError = strings.TrimSuffix(trimmed, ":"), false
		case strings.HasPrefix(trimmed, "error:"):
			inError = true
			if strings.HasPrefix(resource, "pulumi:pulumi:Stack") && (trimmed == "error: update failed" || trimmed == "error: destroy failed" || trimmed == "error: preview failed" || trimmed == "error: refresh failed") {
				inError = false
				continue
			}
			out = append(out, resource+": "+trimmed)
		case inError:
			out[len(out)-1] += " " + trimmed
		}
	}
	return out
}
