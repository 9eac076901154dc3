package termui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// ProgressEveryVar sets how often a running step is reported in a log
// (docs/command-kind.md#progress): a Go duration, default 30s.
const ProgressEveryVar = "DEPLOYER_PROGRESS_EVERY"

// LiveProgress is the progress writer of a deploy (docs/command-kind.md#progress).
// It passes the engines' lines through and follows the running steps
// (the steps of deploy.UI, through liveUI): on a terminal, a line per running step under the
// output, with its elapsed time and last output line, redrawn every
// second (statusLine, as a lock wait's line); in a log, a line
// "[ADDR] ACTION still running (30s)" every `every` of a step's run.
type LiveProgress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	width func() int // terminal columns
	now   func() time.Time
	dim   lipgloss.Style

	mu      sync.Mutex
	lines   engine.WholeLines
	line    statusLine
	running []*runningStep // in start order
	ticking bool
}

type runningStep struct {
	addr, action string
	start        time.Time
	last         string // last output line
	reported     int    // "still running" lines written
}

// LiveUI is the UI of a use case wired by the session: the command's UI
// shows the plan and confirms it, the live progress hears the steps.
type LiveUI struct {
	deploy.UI
	Live *LiveProgress
}

// StepStarted tells the live progress that the step of addr started.
func (u LiveUI) StepStarted(addr, action string) { u.Live.StepStarted(addr, action) }

// StepEnded tells the live progress that the step of addr ended.
func (u LiveUI) StepEnded(addr string) { u.Live.StepEnded(addr) }

var _ deploy.UI = LiveUI{}

// NewLiveProgress returns the progress writer of a deploy on w: tty draws
// the running steps in place (colour: dimmed), else every is how often a
// step still running is reported; width is the terminal's columns.
func NewLiveProgress(w io.Writer, tty, color bool, every time.Duration, width func() int, now func() time.Time) *LiveProgress {
	p := &LiveProgress{w: w, tty: tty, every: every, width: width, now: now, line: statusLine{w: w}}
	if color {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI)
		p.dim = r.NewStyle().Faint(true)
	}
	p.lines = engine.WholeLines{Mu: &p.mu, Line: p.passLine}
	return p
}

// Write passes whole lines to w, under the running steps' lines on a
// terminal.
func (p *LiveProgress) Write(b []byte) (int, error) { return p.lines.Write(b) }

// passLine writes one line; p.mu is held.
func (p *LiveProgress) passLine(line []byte) error {
	text := string(line)
	if rest, ok := strings.CutPrefix(text, "["); ok {
		if addr, out, ok := strings.Cut(rest, "] "); ok {
			for _, s := range p.running {
				if s.addr == addr {
					s.last = strings.TrimRight(out, "\r\n")
				}
			}
		}
	}
	if !p.tty || len(p.running) == 0 {
		_, err := io.WriteString(p.w, text)
		return err
	}
	p.line.clear()
	_, err := io.WriteString(p.w, text)
	p.drawLocked()
	return err
}

// StepStarted begins following a step.
func (p *LiveProgress) StepStarted(addr, action string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, &runningStep{addr: addr, action: action, start: p.now()})
	if p.tty {
		p.drawLocked()
	}
	if !p.ticking {
		p.ticking = true
		go p.tick()
	}
}

// StepEnded stops following a step; its line goes.
func (p *LiveProgress) StepEnded(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.running {
		if s.addr == addr {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	if p.tty {
		p.drawLocked()
	}
}

// tick redraws (terminal) or reports (log) every second while steps run.
func (p *LiveProgress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		p.mu.Lock()
		if len(p.running) == 0 {
			p.ticking = false
			p.mu.Unlock()
			return
		}
		if p.tty {
			p.drawLocked()
		} else {
			p.reportLocked()
		}
		p.mu.Unlock()
	}
}

// drawLocked shows a line per running step in place; p.mu is held.
func (p *LiveProgress) drawLocked() {
	if len(p.running) == 0 {
		p.line.clear()
		return
	}
	now, width := p.now(), p.width()
	lines := make([]string, 0, len(p.running))
	for _, s := range p.running {
		text := fmt.Sprintf("  %s %s %s", s.addr, s.action, now.Sub(s.start).Truncate(time.Second))
		if s.last != "" {
			text += " · " + sanitize.Line(s.last)
		}
		if r := []rune(text); width > 1 && len(r) >= width {
			text = string(r[:width-2]) + "…"
		}
		lines = append(lines, p.dim.Render(text))
	}
	p.line.draw(lines)
}

// reportLocked writes "still running" for each step a multiple of p.every
// old that was not reported at that mark; p.mu is held.
func (p *LiveProgress) reportLocked() {
	now := p.now()
	for _, s := range p.running {
		n := int(now.Sub(s.start) / p.every)
		if n > s.reported {
			s.reported = n
			fmt.Fprintf(p.w, "[%s] %s still running (%s)\n", s.addr, s.action, time.Duration(n)*p.every)
		}
	}
}

// ProgressEvery is DEPLOYER_PROGRESS_EVERY, or logEvery when it is unset
// or not a positive duration.
func ProgressEvery(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv(ProgressEveryVar)); err == nil && d > 0 {
		return d
	}
	return logEvery
}
