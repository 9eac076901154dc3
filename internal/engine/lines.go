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

// WholeLines hands each "\n"-terminated line written to it (its "\n"
// kept) to Line, one line at a time under Mu; a partial line waits for its
// end (Rest). Several writers over one stream may share Mu, so their lines
// never interleave. Write returns Line's first error (that line stays
// buffered). Unlike PrefixLines it splits at "\n" only: it carries lines
// that are already whole, such as the engines' prefixed ones.
type WholeLines struct {
	Mu   *sync.Mutex
	Line func(line []byte) error
	buf  []byte
}

// Write implements io.Writer.
func (w *WholeLines) Write(p []byte) (int, error) {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := w.Line(w.buf[:i+1]); err != nil {
			return len(p), err
		}
		w.buf = w.buf[i+1:]
	}
}

// Rest returns the partial last line and forgets it; the caller holds Mu.
func (w *WholeLines) Rest() []byte {
	rest := w.buf
	w.buf = nil
	return rest
}
