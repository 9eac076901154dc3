package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/secrets"
)

// GitHubReporter writes what a run reports under GitHub Actions
// (docs/github-actions.md): the Markdown job summary, step outputs and
// annotations. Outside Actions (no GITHUB_ACTIONS=true, no
// GITHUB_STEP_SUMMARY/GITHUB_OUTPUT) it writes nothing. One serves a whole
// process, the stacks of a --all run concurrently; it remembers what was
// already said (an error annotated, the file-state warning, the lock-wait
// notice) so each is said once.
type GitHubReporter struct {
	getenv func(string) string
	errOut io.Writer       // stderr, masked
	masker *secrets.Masker // secret values as ***

	envOnce sync.Once
	env     ghactions.Env

	mu              sync.Mutex
	command         string // "deployer deploy", for titles
	annotated       bool   // an error was already annotated
	warnedFileState bool
	noticedWait     bool
}

// newGitHubReporter returns a reporter of the runner getenv describes
// (read on first use), writing annotations to errOut and masking what it
// writes with masker.
func newGitHubReporter(getenv func(string) string, errOut io.Writer, masker *secrets.Masker) *GitHubReporter {
	return &GitHubReporter{getenv: getenv, errOut: errOut, masker: masker}
}

// Env is the runner's settings, read once.
func (r *GitHubReporter) Env() ghactions.Env {
	r.envOnce.Do(func() { r.env = ghactions.Detect(r.getenv) })
	return r.env
}

// setCommand names the running command ("deployer deploy") for titles.
func (r *GitHubReporter) setCommand(c string) {
	r.mu.Lock()
	r.command = c
	r.mu.Unlock()
}

// Command is the running command's path, "" before one runs.
func (r *GitHubReporter) Command() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.command
}

// first reports whether *flag was unset, and sets it: true exactly once.
func (r *GitHubReporter) first(flag *bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *flag {
		return false
	}
	*flag = true
	return true
}

// markAnnotated records that the run's failure was annotated where it was
// seen, so the final error is not annotated again.
func (r *GitHubReporter) markAnnotated() { r.first(&r.annotated) }

func (r *GitHubReporter) wasAnnotated() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.annotated
}

// annotate prints a workflow command on stderr under GitHub Actions.
func (r *GitHubReporter) annotate(level, title, msg string) {
	if r.Env().Actions {
		fmt.Fprint(r.errOut, ghactions.Annotation(level, title, msg))
	}
}

// summarize appends Markdown to the job summary when GITHUB_STEP_SUMMARY is
// set; a failure to write it is a warning, never the command's error.
func (r *GitHubReporter) summarize(md string) {
	if p := r.Env().StepSummary; p != "" {
		if err := ghactions.AppendSummary(p, r.masker.Mask(md)); err != nil { // secrets as ***
			fmt.Fprintf(r.errOut, "Warning: %v\n", err)
		}
	}
}

// setOutputs writes step outputs when GITHUB_OUTPUT is set.
func (r *GitHubReporter) setOutputs(outs ...ghactions.Output) {
	if p := r.Env().Output; p != "" {
		if err := ghactions.WriteOutputs(p, outs...); err != nil {
			fmt.Fprintf(r.errOut, "Warning: %v\n", err)
		}
	}
}
