package sanitize

import "html"

// Masked is the sanitiser with secrets hidden first: each method passes
// the raw data through Mask (a secrets.Masker's Mask: every known secret
// as ***), then escapes it as the function of the same name does. Data is
// masked before it is escaped or quoted, never after: escaping changes a
// secret (Hunter_2024*x|y becomes Hunter\_2024\*x\|y in a table cell) and
// a masker run over the escaped text no longer finds it
// (docs/secrets.md#masked-everywhere). The zero Masked masks nothing.
type Masked struct {
	Mask func(string) string
}

// Raw is s with every known secret hidden, not escaped.
func (m Masked) Raw(s string) string {
	if m.Mask == nil {
		return s
	}
	return m.Mask(s)
}

// Line is Line of s masked.
func (m Masked) Line(s string) string { return Line(m.Raw(s)) }

// Text is Text of s masked.
func (m Masked) Text(s string) string { return Text(m.Raw(s)) }

// CodeText is CodeText of s masked.
func (m Masked) CodeText(s string) string { return CodeText(m.Raw(s)) }

// CodeSpan is CodeSpan of s masked.
func (m Masked) CodeSpan(s string) string { return CodeSpan(m.Raw(s)) }

// CodeBlock is CodeBlock of content masked.
func (m Masked) CodeBlock(info, content string) string { return CodeBlock(info, m.Raw(content)) }

// Markdown is Markdown of s masked.
func (m Masked) Markdown(s string) string { return Markdown(m.Raw(s)) }

// HTML is s masked, on one line (Line) and HTML-escaped, for HTML such as
// a <summary> or <code> element.
func (m Masked) HTML(s string) string { return noComment(html.EscapeString(Line(m.Raw(s)))) }

// Command is Command of args, each masked.
func (m Masked) Command(args ...string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = m.Raw(a)
	}
	return Command(out...)
}
