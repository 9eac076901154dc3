package sanitize

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

func TestLineAndText(t *testing.T) {
	for _, tc := range []struct{ in, line, text string }{
		{"db.password", "db.password", "db.password"},
		{"a\n::warning title=x::pwned", `a\n::warning title=x::pwned`, "a\n\\::warning title=x::pwned"},
		{"  ::error::x", `  \::error::x`, `  \::error::x`},
		{"x\r\x1b[2Khidden", `x\r\x1b[2Khidden`, `x\r\x1b[2Khidden`},
		{"c1 \u009b31m and \xc2\x85", `c1 \u009b31m and \u0085`, `c1 \u009b31m and \u0085`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"say ##[error]x", `say #\#[error]x`, `say #\#[error]x`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"tab\tkept, del \x7f", `tab` + "\t" + `kept, del \x7f`, `tab` + "\t" + `kept, del \x7f`},
		{"ipv6 ::1 mid-line", "ipv6 ::1 mid-line", "ipv6 ::1 mid-line"},
		{"crlf\r\n::x\r", `crlf\r\n::x\r`, "crlf\n\\::x\\r"},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

func TestFenceIsLongerThanAnyRunOfBackticks(t *testing.T) {
	for in, want := range map[string]string{"": "```", "a `b`": "```", "```": "````", "x\n`````\ny": "``````"} {
		if got := Fence(in); got != want {
			t.Errorf("Fence(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := CodeBlock("diff", "+ key```\n**bold**"), "````diff\n+ key```\n**bold**\n````\n"; got != want {
		t.Errorf("CodeBlock = %q, want %q", got, want)
	}
}

func TestMarkdownCellsStayOneCell(t *testing.T) {
	if got, want := CodeSpan("a`b|c\nd\x1b"), `a'b\|c d\x1b`; got != want {
		t.Errorf("CodeSpan = %q, want %q", got, want)
	}
	if got, want := Markdown("**x** | <b>\n_y_"), `\*\*x\*\* \| &lt;b&gt; \_y\_`; got != want {
		t.Errorf("Markdown = %q, want %q", got, want)
	}
}

// A command pasted into a shell runs with exactly the arguments given.
func TestCommandPastesAsTheSameArguments(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to check the quoting:", err)
	}
	args := []string{"deployer", "unlock", "--key", "k", "--lock-id", "x; touch PWNED #", "it's $HOME `id`", "esc\x1b[31m\r\nnl", "plain-id_1.2"}
	line := Command(args...)
	if hasControl(line, false) {
		t.Fatalf("the command line shows a control character: %q", line)
	}
	got, err := exec.Command(bash, "-c", "f() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }; f "+line).Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", line, err)
	}
	if want := strings.Join(args, "\x00") + "\x00"; string(got) != want {
		t.Errorf("pasted %q, bash saw %q, want %q", line, got, want)
	}
	if !strings.HasSuffix(Command("--lock-id", "x; touch PWNED #"), `'x; touch PWNED #'`) {
		t.Errorf("Command = %s", Command("--lock-id", "x; touch PWNED #"))
	}
}

// FuzzSanitize: whatever the input, Line and Text leave no control
// character and no workflow-command prefix, and a CodeBlock of it is one
// fenced block a CommonMark parser closes where it should (the text after
// it is a paragraph of its own). Its seed corpus is testdata/fuzz.
func FuzzSanitize(f *testing.F) {
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		line, txt := Line(s), Text(s)
		checkClean(t, "Line", line, false)
		checkClean(t, "Text", txt, true)
		if strings.Contains(CodeSpan(s), "`") || strings.Contains(Markdown(s), "`") {
			t.Errorf("a backtick is left in a code span or cell: %q", s)
		}
		checkBlock(t, s)
	})
}

func checkClean(t *testing.T, name, out string, keepNewlines bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s left invalid UTF-8: %q", name, out)
	}
	if hasControl(out, keepNewlines) {
		t.Fatalf("%s left a control character: %q", name, out)
	}
	if strings.Contains(out, "##[") {
		t.Fatalf("%s left ##[: %q", name, out)
	}
	for l := range strings.Lines(out) {
		if strings.HasPrefix(strings.TrimLeftFunc(l, runnerSpace), "::") {
			t.Fatalf("%s left a line starting a workflow command: %q", name, l)
		}
	}
}

func checkBlock(t *testing.T, s string) {
	t.Helper()
	block := CodeBlock("text", s)
	src := []byte(block + "\nAFTER-THE-BLOCK\n")
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	first := doc.FirstChild()
	code, ok := first.(*ast.FencedCodeBlock)
	if !ok {
		t.Fatalf("CodeBlock(%q) is not one fenced block: %q", s, block)
	}
	var inside bytes.Buffer
	for i := 0; i < code.Lines().Len(); i++ {
		seg := code.Lines().At(i)
		inside.Write(seg.Value(src))
	}
	want := CodeText(s)
	if want != "" && !strings.HasSuffix(want, "\n") {
		want += "\n"
	}
	if inside.String() != want {
		t.Fatalf("the block of %q holds %q, want %q", s, inside.String(), want)
	}
	next := first.NextSibling()
	if next == nil || next.Kind() != ast.KindParagraph || next.NextSibling() != nil ||
		string(next.(*ast.Paragraph).Lines().Value(src)) != "AFTER-THE-BLOCK" {
		t.Fatalf("the text after the block of %q is not a paragraph of its own: %q", s, block)
	}
}
