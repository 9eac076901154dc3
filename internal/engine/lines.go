package engine

import (
	"bytes"
	"io"
	"sync"
)

// MaxLine bounds a buffered partial line, in bytes; a longer line is
// emitted in pieces.
const MaxLine = 64 << 10

// LineSplitter cuts a child's output into lines at \n and at \r: the
// GitHub Actions runner splits its log at both, so a "\r::error::" inside a
// line would otherwise start a workflow command of its own without the
// prefix an engine puts on each line. "\r\n" ends one line. The zero value
// is ready; not safe for concurrent use.
type LineSplitter struct {
	buf     []byte
	afterCR bool // the last line ended at \r: a \n right after it ends nothing more
}

// Write calls emit with each line p completes (without its terminator).
func (l *LineSplitter) Write(p []byte, emit func(line []byte)) {
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			l.buf = append(l.buf, p...)
			l.afterCR = false
			if len(l.buf) >= MaxLine {
				l.Flush(emit)
			}
			return
		}
		l.buf = append(l.buf, p[:i]...)
		if len(l.buf) > 0 || (p[i] == '\n' && !l.afterCR) {
			emit(l.buf)
		}
		l.afterCR = p[i] == '\r'
		l.buf = l.buf[:0]
		p = p[i+1:]
	}
}

// Flush calls emit with the unterminated last line, if any.
func (l *LineSplitter) Flush(emit func(line []byte)) {
	if len(l.buf) > 0 {
		emit(l.buf)
		l.buf = l.buf[:0]
	}
}

// PrefixLines returns a writer that writes each line written to it to w
// as one Write of prefix, the line and "\n" (lines split as LineSplitter
// does), and a flush function for the unterminated last line. Safe for
// concurrent use.
func PrefixLines(w io.Writer, prefix string) (io.Writer, func()) {
	p := &prefixWriter{w: w, prefix: prefix}
	return p, p.flush
}

type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	lines  LineSplitter
}

func (p *prefixWriter) emit(line []byte) {
	buf := make([]byte, 0, len(p.prefix)+len(line)+1)
	buf = append(append(append(buf, p.prefix...), line...), '\n')
	_, _ = p.w.Write(buf) // progress is best effort
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines.Write(b, p.emit)
	return len(b), nil
}

func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines.Flush(p.emit)
}
