// Package ghactions is deployer's one home for reporting to GitHub:
// detecting a runner from its standard environment variables, workflow
// commands (annotations and log groups), step outputs (GITHUB_OUTPUT), the
// job summary (GITHUB_STEP_SUMMARY), the plan comment on a pull request,
// and the Reporter that renders each command's results into them. Formats
// follow GitHub's "Workflow commands for GitHub Actions" reference;
// docs/github-actions.md describes what deployer writes.
package ghactions

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// Env is what deployer reads from a runner's environment.
type Env struct {
	// Actions is true when GITHUB_ACTIONS is "true": annotations, groups
	// and notices are printed.
	Actions bool
	// CI is true on any CI system that sets CI=true (GitHub Actions does).
	CI bool
	// StepSummary is the file named by GITHUB_STEP_SUMMARY ("" without).
	StepSummary string
	// Output is the file named by GITHUB_OUTPUT ("" without).
	Output string
	// ServerURL, Repository and RunID locate the run (for links).
	ServerURL, Repository, RunID string
}

// Detect reads the runner's variables through getenv (os.Getenv in
// production).
func Detect(getenv func(string) string) Env {
	return Env{
		Actions:     getenv("GITHUB_ACTIONS") == "true",
		CI:          getenv("CI") == "true" || getenv("CI") == "1" || getenv("GITHUB_ACTIONS") == "true",
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		Output:      getenv("GITHUB_OUTPUT"),
		ServerURL:   getenv("GITHUB_SERVER_URL"),
		Repository:  getenv("GITHUB_REPOSITORY"),
		RunID:       getenv("GITHUB_RUN_ID"),
	}
}

// Annotation levels of workflow commands.
const (
	Error   = "error"
	Warning = "warning"
	Notice  = "notice"
)

// Annotation formats a workflow command that annotates the run:
// "::error title=T::message\n". An empty title is left out. The message
// keeps its lines (escaped as %0A, as the runner expects). Title and
// message pass through the sanitiser first (sanitize.Line, sanitize.Text):
// they quote data.
func Annotation(level, title, msg string) string {
	title, msg = sanitize.Line(title), sanitize.Text(msg)
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(level)
	if title != "" {
		b.WriteString(" title=")
		b.WriteString(escapeProperty(title))
	}
	b.WriteString("::")
	b.WriteString(escapeData(msg))
	b.WriteByte('\n')
	return b.String()
}

// escapeData escapes a command's message (GitHub's toolkit escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a command's property value (GitHub's toolkit
// escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Output is one step output.
type Output struct{ Name, Value string }

// WriteOutputs appends outputs to the GITHUB_OUTPUT file at path, one
// "name=value" line each; a value with a newline uses the heredoc form
// "name<<DELIM\nvalue\nDELIM" with a delimiter not found in the value.
func WriteOutputs(path string, outputs ...Output) error {
	var b strings.Builder
	for _, o := range outputs {
		if !strings.ContainsAny(o.Value, "\r\n") {
			fmt.Fprintf(&b, "%s=%s\n", o.Name, o.Value)
			continue
		}
		delim := "ghadelimiter_deployer"
		for i := 0; strings.Contains(o.Value, delim); i++ {
			delim = fmt.Sprintf("ghadelimiter_deployer_%d", i)
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o.Name, delim, o.Value, delim)
	}
	return appendFile(path, "GITHUB_OUTPUT", b.String())
}

// AppendSummary appends Markdown to the GITHUB_STEP_SUMMARY file at path.
func AppendSummary(path, markdown string) error {
	return appendFile(path, "GITHUB_STEP_SUMMARY", markdown)
}

func appendFile(path, what, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	return nil
}

// GroupWriter puts the progress lines of each component in a log group
// (::group::ADDRESS ... ::endgroup::). It recognises component lines by the
// "[service/component] " prefix the engines write; a line of another
// component ends the open group and opens its own (concurrent components
// give several groups each), and a line without a prefix ends the group.
// Close ends the open group. Writes are whole lines or are buffered until
// their newline. Every line passes through sanitize.Commands: the runner
// reads no workflow command a component prints (docs/github-actions.md#what-is-masked-where).
type GroupWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lines engine.WholeLines
	open  string // address of the open group
}

// NewGroupWriter returns a GroupWriter over w.
func NewGroupWriter(w io.Writer) *GroupWriter {
	g := &GroupWriter{w: w}
	g.lines = engine.WholeLines{Mu: &g.mu, Line: func(line []byte) error { return g.line(string(line)) }}
	return g
}

// Write implements io.Writer.
func (g *GroupWriter) Write(p []byte) (int, error) { return g.lines.Write(p) }

func (g *GroupWriter) line(line string) error {
	addr := ""
	if strings.HasPrefix(line, "[") {
		if j := strings.Index(line, "] "); j > 1 && strings.Contains(line[1:j], "/") {
			addr = line[1:j]
		}
	}
	var b strings.Builder
	if addr != g.open {
		if g.open != "" {
			b.WriteString("::endgroup::\n")
		}
		if addr != "" {
			b.WriteString("::group::" + escapeData(sanitize.Line(addr)) + "\n")
		}
		g.open = addr
	}
	b.WriteString(sanitize.Commands(line)) // a component writes no workflow command
	_, err := io.WriteString(g.w, b.String())
	return err
}

// Close writes a partial last line and ends the open group.
func (g *GroupWriter) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	if rest := g.lines.Rest(); len(rest) > 0 {
		b.WriteString(sanitize.Commands(string(rest)))
		b.WriteByte('\n')
	}
	if g.open != "" {
		b.WriteString("::endgroup::\n")
		g.open = ""
	}
	_, err := io.WriteString(g.w, b.String())
	return err
}
