package sanitize

import "strings"

// Fence returns a Markdown code fence for content: three backticks, or one
// more than the longest run of backticks in content, so no line of
// content closes the block early.
func Fence(content string) string {
	longest, run := 0, 0
	for i := 0; i < len(content); i++ {
		if content[i] != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return strings.Repeat("`", max(3, longest+1))
}

// CodeBlock returns content (passed through CodeText) as a fenced
// Markdown code block with info string info ("diff", "sh", "text"),
// ending in a newline. Its fence is Fence's, so the block ends where it
// should.
func CodeBlock(info, content string) string {
	content = CodeText(content)
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	fence := Fence(content)
	return fence + info + "\n" + content + fence + "\n"
}

// CodeText returns s for the inside of a fenced code block: Text's lines,
// and "<!--" broken by a zero-width space (noComment), so no line of data
// reads as the hidden marker of a comment or of its sections.
func CodeText(s string) string { return noComment(Text(s)) }

// CodeSpan returns s for a code span in a table cell: on one line (a
// newline becomes a space, other control characters are escaped as Line
// does), a backtick becomes ' and | is escaped, so the span and the cell
// end where they should; "<!--" is broken as CodeText breaks it. Inside a
// code span nothing else is markup: no mention, link or image.
func CodeSpan(s string) string {
	return noComment(strings.NewReplacer("|", `\|`, "`", "'").Replace(oneLine(s)))
}

// Markdown returns s for a table cell or a paragraph: on one line as
// CodeSpan puts it, and inert (docs/github-actions.md#what-is-masked-where):
// the characters Markdown reads as markup (emphasis, links and images:
// ! [ ] ( )) backslash-escaped, HTML's <, > and & written as entities (no
// tag, no comment, no entity that decodes to markup), and a zero-width
// space after an @ that could start a mention (noMention).
func Markdown(s string) string { return noMention(markdownCell.Replace(oneLine(s))) }

var markdownCell = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "*", `\*`, "_", `\_`, "`", "'",
	"!", `\!`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`)

// noMention puts a zero-width space after every @ of s that GitHub could
// read as a mention (@login, @org/team): one not preceded by a letter or
// digit (an e-mail address such as ci@runner mentions no one, and stays as
// it is).
func noMention(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '@' && (i == 0 || !isAlnum(s[i-1])) {
			b.WriteString(zeroWidthSpace)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// zeroWidthSpace breaks a mention or an HTML comment without changing what
// a reader sees (GitHub's own tools break mentions the same way).
const zeroWidthSpace = "\u200b"

// noComment breaks every "<!--" of s as "<" zero-width space "!--".
func noComment(s string) string { return strings.ReplaceAll(s, "<!--", "<"+zeroWidthSpace+"!--") }

// oneLine is s on one line: newlines as spaces, then Line.
func oneLine(s string) string { return Line(strings.ReplaceAll(s, "\n", " ")) }
