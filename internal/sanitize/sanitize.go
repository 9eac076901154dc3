package sanitize

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s for one line of output: every control character escaped,
// a newline too (as \n), and a leading workflow-command prefix
// neutralised. Text that needs none of it is returned as it is.
func Line(s string) string { return clean(s, false) }

// Text returns s with its lines kept: every control character but the
// newline (and tab) escaped (a CRLF line end becomes a newline), and on
// every line a workflow-command prefix neutralised: "::" as the first
// characters after blanks becomes "\::" (the runner reads a command only
// from a line that starts with "::" once every leading Unicode space is
// trimmed, Blank), and "##[" anywhere becomes "#\#[" (the runner's older
// form).
func Text(s string) string { return clean(s, true) }

func clean(s string, keepNewlines bool) string {
	if !needsCleaning(s, keepNewlines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	lineStart := true // only blanks since the start of the line
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
			lineStart = false
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
			lineStart = true
		case r == '\r' && keepNewlines && strings.HasPrefix(s[i:], "\r\n"): // a CRLF line end is a newline
			b.WriteByte('\n')
			lineStart = true
			i += 2
			continue
		case escaped(r):
			writeEscape(&b, r)
			lineStart = false
		default:
			if n := neutralise(&b, s[i:], lineStart); n > 0 {
				i += n
				lineStart = false
				continue
			}
			b.WriteRune(r)
			lineStart = lineStart && Blank(r)
		}
		i += size
	}
	return b.String()
}

// Blank reports whether the GitHub Actions runner trims r before it looks
// for "::" at the start of a line: every Unicode space (.NET's
// char.IsWhiteSpace, which its string.TrimStart uses: space, tab, the C0
// blanks, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
// U+205F, U+3000) and, to be safe, the invisible characters older .NET
// versions trimmed too (U+180E, U+200B-U+200D, U+2060, U+FEFF).
func Blank(r rune) bool {
	switch r {
	case '\u180e', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r)
}

// needsCleaning reports whether clean would change s.
func needsCleaning(s string, keepNewlines bool) bool {
	return strings.Contains(s, "::") || strings.Contains(s, "##[") || hasControl(s, keepNewlines)
}

// hasControl reports whether s holds a character clean escapes (a
// newline only when keepNewlines is false) or a byte that is not UTF-8.
func hasControl(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (escaped(r) && (r != '\n' || !keepNewlines)) {
			return true
		}
		i += size
	}
	return false
}

// escaped reports whether r is shown escaped: C0 controls but tab, DEL,
// C1 controls, the bidirectional formatting characters (which reorder
// what a reader sees), and the line and paragraph separators.
func escaped(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// writeEscape writes r as Go quotes it: \n, \r, \x1b, \u202e.
func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x80 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
