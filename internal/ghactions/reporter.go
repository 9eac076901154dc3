package ghactions

import (
	"fmt"
	"io"
	"sync"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/secrets"
)

// Reporter writes what a run reports under GitHub Actions
// (docs/github-actions.md): the Markdown job summary, step outputs and
// annotations. Outside Actions (no GITHUB_ACTIONS=true, no
// GITHUB_STEP_SUMMARY/GITHUB_OUTPUT) it writes nothing. One serves a whole
// process, the stacks of a --all run concurrently; it remembers what was
// already said (an error annotated, the file-state warning, the lock-wait
// notice) so each is said once.
type Reporter struct {
	getenv func(string) string
	hints  Hints
	errOut io.Writer       // stderr, masked
	masker *secrets.Masker // secret values as ***

	envOnce sync.Once
	env     Env

	mu              sync.Mutex
	command         string // "deployer deploy", for titles
	annotated       bool   // an error was already annotated
	warnedFileState bool
	noticedWait     bool
}

// Hints are what the CLI adds to an error, supplied by it: Remedy is the
// error's message with what to do next, UnlockCommand the exact command
// that breaks a held lock.
type Hints struct {
	Remedy        func(error) string
	UnlockCommand func(lockmgr.Record) string
}

// NewReporter returns a reporter of the runner getenv describes (read on
// first use), writing annotations to errOut, masking what it writes with
// masker and wording errors with hints.
func NewReporter(getenv func(string) string, errOut io.Writer, masker *secrets.Masker, hints Hints) *Reporter {
	return &Reporter{getenv: getenv, errOut: errOut, masker: masker, hints: hints}
}

// Env is the runner's settings, read once.
func (r *Reporter) Env() Env {
	r.envOnce.Do(func() { r.env = Detect(r.getenv) })
	return r.env
}

// SetCommand names the running command ("deployer deploy") for titles.
func (r *Reporter) SetCommand(c string) {
	r.mu.Lock()
	r.command = c
	r.mu.Unlock()
}

// Command is the running command's path, "" before one runs.
func (r *Reporter) Command() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.command
}

// first reports whether *flag was unset, and sets it: true exactly once.
func (r *Reporter) first(flag *bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *flag {
		return false
	}
	*flag = true
	return true
}

// MarkAnnotated records that the run's failure was annotated where it was
// seen, so the final error is not annotated again.
func (r *Reporter) MarkAnnotated() { r.first(&r.annotated) }

func (r *Reporter) wasAnnotated() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.annotated
}

// annotate prints a workflow command on stderr under GitHub Actions, its
// title and message masked before Annotation escapes them.
func (r *Reporter) annotate(level, title, msg string) {
	if r.Env().Actions {
		fmt.Fprint(r.errOut, Annotation(level, r.masker.Mask(title), r.masker.Mask(msg)))
	}
}

// Summarize appends Markdown to the job summary when GITHUB_STEP_SUMMARY is
// set; a failure to write it is a warning, never the command's error.
func (r *Reporter) Summarize(md string) {
	if p := r.Env().StepSummary; p != "" {
		if err := AppendSummary(p, r.masker.Mask(md)); err != nil { // secrets as ***
			fmt.Fprintf(r.errOut, "Warning: %v\n", err)
		}
	}
}

// esc masks data with the reporter's masker before it is escaped
// (sanitize.Masked): every renderer of the summary and comments uses it.
func (r *Reporter) esc() sanitize.Masked { return sanitize.Masked{Mask: r.masker.Mask} }

// setOutputs writes step outputs when GITHUB_OUTPUT is set.
func (r *Reporter) setOutputs(outs ...Output) {
	if p := r.Env().Output; p != "" {
		if err := WriteOutputs(p, outs...); err != nil {
			fmt.Fprintf(r.errOut, "Warning: %v\n", err)
		}
	}
}
