package termui

import (
	"bytes"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is a tabwriter whose lines end without padding.
type Table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	w   io.Writer
}

// NewTable returns a table writing to w: cells padded with two spaces, each
// line's trailing padding cut.
func NewTable(w io.Writer) *Table {
	t := &Table{w: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush writes the table.
func (t *Table) Flush() {
	_ = t.Writer.Flush()
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		if l != "" {
			_, _ = io.WriteString(t.w, strings.TrimRight(l, " \n")+"\n")
		}
	}
	t.buf.Reset()
}
