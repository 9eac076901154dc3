package command

import (
	"io"
	"sync"

	"github.com/deployer-dev/deployer/internal/engine"
)

// streamer copies a command's stdout and stderr to one progress writer, line
// by line, each line prefixed with the component address. Lines of the two
// streams never interleave mid-line. It keeps the last stderr lines for
// error messages.
type streamer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	keep   int
	last   []string
	out    lineWriter
	err    lineWriter
}

func newStreamer(w io.Writer, prefix string, keep int) *streamer {
	s := &streamer{w: w, prefix: prefix, keep: keep}
	s.out = lineWriter{s: s}
	s.err = lineWriter{s: s, isErr: true}
	return s
}

func (s *streamer) stdout() io.Writer { return &s.out }
func (s *streamer) stderr() io.Writer { return &s.err }

// flush writes any unterminated last lines.
func (s *streamer) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.flushLocked()
	s.err.flushLocked()
}

// tail returns a copy of the last stderr lines, oldest first.
func (s *streamer) tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.last...)
}

// emitLocked writes one line (without its newline); s.mu is held.
func (s *streamer) emitLocked(line []byte, isErr bool) {
	buf := make([]byte, 0, len(s.prefix)+len(line)+1)
	buf = append(buf, s.prefix...)
	buf = append(buf, line...)
	buf = append(buf, '\n')
	_, _ = s.w.Write(buf) // progress is best effort: a broken stderr must not fail a deploy
	if isErr {
		s.last = append(s.last, string(line))
		if len(s.last) > s.keep {
			s.last = s.last[len(s.last)-s.keep:]
		}
	}
}

// lineWriter is one of the two streams of a streamer.
type lineWriter struct {
	s     *streamer
	isErr bool
	lines engine.LineSplitter
}

func (l *lineWriter) emit(line []byte) { l.s.emitLocked(line, l.isErr) }

// Write splits p into lines at \n and at \r (engine.LineSplitter); every
// piece gets the prefix.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.lines.Write(p, l.emit)
	return len(p), nil
}

func (l *lineWriter) flushLocked() { l.lines.Flush(l.emit) }
