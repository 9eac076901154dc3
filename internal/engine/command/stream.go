package command

import (
	"bytes"
	"io"
	"sync"
)

// maxLine bounds a buffered partial line; longer lines are written in pieces.
const maxLine = 64 << 10

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
	buf   []byte
	// afterCR: the last line ended at \r, so a \n right after it ends
	// nothing more.
	afterCR bool
}

// Write splits p into lines at \n and at \r (the GitHub Actions runner
// splits its log at both, so a "\r::error::" inside a line would start a
// workflow command of its own); every piece gets the prefix. "\r\n" ends
// one line.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			l.buf = append(l.buf, p...)
			l.afterCR = false
			if len(l.buf) >= maxLine {
				l.flushLocked()
			}
			break
		}
		l.buf = append(l.buf, p[:i]...)
		if len(l.buf) > 0 || (p[i] == '\n' && !l.afterCR) {
			l.s.emitLocked(l.buf, l.isErr)
		}
		l.afterCR = p[i] == '\r'
		l.buf = l.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (l *lineWriter) flushLocked() {
	if len(l.buf) > 0 {
		l.s.emitLocked(l.buf, l.isErr)
		l.buf = l.buf[:0]
	}
}
