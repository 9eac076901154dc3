package termui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/sanitize"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// IOStreams is the only output path of the commands: data on Out,
// progress and diagnostics on ErrOut, prompts only when In and ErrOut are
// terminals.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// Mask hides every known secret in a piece of data before a view
	// quotes or escapes it (the session's Masker; nil masks nothing). Out
	// and ErrOut are masked again as they are written.
	Mask func(string) string

	inTTY, outTTY, errTTY bool
	noColor               bool
	errWidth              func() int // stderr's columns; nil: 80
}

// System returns the process's streams. Writes to stdout and stderr never
// fail: a reader that went away (`deployer deploy | head -1`) must not stop a
// deploy between its apply and its state write, so after the first error a
// stream discards what is written to it (docs/design.md#output).
func System() *IOStreams {
	isTTY := func(f *os.File) bool { return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) }
	return &IOStreams{
		In: os.Stdin, Out: &bestEffort{w: os.Stdout}, ErrOut: &bestEffort{w: os.Stderr},
		inTTY: isTTY(os.Stdin), outTTY: isTTY(os.Stdout), errTTY: isTTY(os.Stderr),
		noColor: NoColorEnv(os.Getenv),
		errWidth: func() int {
			if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && w > 0 {
				return w
			}
			return 80
		},
	}
}

// NoColorEnv reports whether the environment asks for no colour: NO_COLOR
// set to anything (no-color.org) or TERM=dumb.
func NoColorEnv(getenv func(string) string) bool {
	return getenv("NO_COLOR") != "" || getenv("TERM") == "dumb"
}

// bestEffort is a writer whose errors are dropped: after the first failed
// write (EPIPE from a closed pipe, a full disk) it discards everything.
type bestEffort struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
}

func (b *bestEffort) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.broken {
		if _, err := b.w.Write(p); err != nil {
			b.broken = true
		}
	}
	return len(p), nil
}

// ChildStream returns the file behind w for a child process's stdio, so a
// child of `lock exec` writes to the terminal or pipe itself (and sees a
// TTY when there is one); other writers are returned as they are.
func ChildStream(w io.Writer) io.Writer {
	if b, ok := w.(*bestEffort); ok {
		return b.w
	}
	return w
}

// Test returns in-memory streams (no TTY) and their buffers.
func Test(stdin string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut}, out, errOut
}

// SetTTY marks the streams as terminals (tests of prompts).
func (s *IOStreams) SetTTY(in, out, errOut bool) { s.inTTY, s.outTTY, s.errTTY = in, out, errOut }

// CanPrompt reports whether the user can answer a question.
func (s *IOStreams) CanPrompt() bool { return s.inTTY && s.errTTY }

// ErrTTY reports whether stderr is a terminal (progress lines may be
// updated in place).
func (s *IOStreams) ErrTTY() bool { return s.errTTY }

// ErrWidth is the width of the terminal on stderr in columns (80 when it
// is not known).
func (s *IOStreams) ErrWidth() int {
	if s.errWidth == nil {
		return 80
	}
	return s.errWidth()
}

// ColorErr reports whether stderr gets colour: a TTY and no NO_COLOR.
func (s *IOStreams) ColorErr() bool { return s.errTTY && !s.noColor }

// ColorOut reports whether stdout gets colour: a TTY and no NO_COLOR.
func (s *IOStreams) ColorOut() bool { return s.outTTY && !s.noColor }

// OutTTY reports whether stdout is a terminal.
func (s *IOStreams) OutTTY() bool { return s.outTTY }

// DisableColor turns colour off (--no-color).
func (s *IOStreams) DisableColor() { s.noColor = true }

// Confirm asks question on ErrOut and reads "yes" (or "y") from In. Without a
// TTY it returns an error telling the user to pass --yes (docs/exit-codes.md).
func (s *IOStreams) Confirm(question string) (bool, error) {
	a, err := s.ask(question + " (yes/no): ")
	a = strings.ToLower(a)
	return a == "yes" || a == "y", err
}

// ConfirmTyped asks question on ErrOut and reads the answer from In: only
// "yes" or name (when not ""), typed in full, confirms; "y" does not, as
// terraform destroy takes only "yes". Without a TTY it fails as Confirm does.
func (s *IOStreams) ConfirmTyped(question, name string) (bool, error) {
	accept := "yes"
	if name != "" {
		accept += " or " + name
	}
	a, err := s.ask(fmt.Sprintf("%s There is no undo. Type %s to confirm: ", question, accept))
	return a == "yes" || (name != "" && a == name), err
}

// ask prints prompt on ErrOut and returns the line read from In, trimmed
// ("" at end of input).
func (s *IOStreams) ask(prompt string) (string, error) {
	if !s.CanPrompt() {
		return "", &exitcode.UsageError{Msg: "confirmation required but there is no terminal to ask on: pass --yes to proceed"}
	}
	fmt.Fprint(s.ErrOut, prompt)
	line, err := bufio.NewReader(s.In).ReadString('\n')
	if err != nil && line == "" {
		return "", nil
	}
	return strings.TrimSpace(line), nil
}

// PrintJSON writes v to Out as indented JSON (the --json output).
func (s *IOStreams) PrintJSON(v any) error { return WriteJSON(s.Out, v) }

// WriteJSON writes v as indented JSON, through sanitize.JSON: stored data
// in it writes no workflow command under GitHub Actions.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(sanitize.JSON(b.Bytes()))
	return err
}

// OrDash is s, or "-" when it is empty (a table cell).
func OrDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}
