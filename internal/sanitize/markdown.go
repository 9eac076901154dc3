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

// CodeBlock returns content (passed through Text) as a fenced Markdown
// code block with info string info ("diff", "sh", "text"), ending in a
// newline. Its fence is Fence's, so the block ends where it should.
func CodeBlock(info, content string) string {
	content = Text(content)
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	fence := Fence(content)
	return fence + info + "\n" + content + fence + "\n"
}

// CodeSpan returns s for a code span in a table cell: on one line (a
// newline becomes a space, other control characters are escaped as Line
// does), a backtick becomes ' and | is escaped, so the span and the cell
// end where they should.
func CodeSpan(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(oneLine(s))
}

// Markdown returns s for a table cell or a paragraph: on one line as
// CodeSpan puts it, the characters Markdown reads as markup escaped and
// HTML's < and > written as entities.
func Markdown(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "'").Replace(oneLine(s))
}

// oneLine is s on one line: newlines as spaces, then Line.
func oneLine(s string) string { return Line(strings.ReplaceAll(s, "\n", " ")) }
