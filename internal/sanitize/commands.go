package sanitize

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Commands returns a component's output line (or lines) for a GitHub
// Actions log: the runner reads no workflow command in it, and nothing
// else changes (colours and progress stay). "##[" anywhere becomes
// "#\#[", and "::" as the first characters of a line after blanks (Blank)
// becomes "\::", where a line starts after \n and after \r (the runner
// reads a log in lines split at both). Deployer's own workflow commands
// are written by its reporter, never by a child (docs/github-actions.md#what-is-masked-where).
func Commands(s string) string {
	if !strings.Contains(s, "::") && !strings.Contains(s, "##[") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	lineStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(s[i])
			lineStart = true
		default:
			if n := neutralise(&b, s[i:], lineStart); n > 0 {
				i += n
				lineStart = false
				continue
			}
			b.WriteString(s[i : i+size])
			lineStart = lineStart && Blank(r)
		}
		i += size
	}
	return b.String()
}

// JSON returns a JSON document for a log the GitHub runner reads: "##["
// (which can only stand inside a JSON string) becomes "##\u005b", the same
// string to a JSON reader, and no line of an encoder's output starts with
// "::" (each starts with blanks and a quote or a bracket). Control
// characters are already escaped by the encoder.
func JSON(doc []byte) []byte {
	if !bytes.Contains(doc, []byte("##[")) {
		return doc
	}
	return bytes.ReplaceAll(doc, []byte("##["), []byte(`##\u005b`))
}

// neutralise writes the neutralised form of the workflow command that s
// starts with ("::" at a line's start becomes "\::", "##[" anywhere
// "#\#[") and returns how many bytes of s it stands for; 0, writing
// nothing, when s starts with none.
func neutralise(b *strings.Builder, s string, lineStart bool) int {
	switch {
	case lineStart && strings.HasPrefix(s, "::"):
		b.WriteString(`\::`)
		return 2
	case strings.HasPrefix(s, "##["):
		b.WriteString(`#\#[`)
		return 3
	}
	return 0
}
