package sanitize

import (
	"strings"
	"testing"
	"unicode"
)

// runnerSpace is a character the GitHub Actions runner trims before it
// looks for "::" (.NET's string.TrimStart(): char.IsWhiteSpace, every
// Unicode space and the C0 blanks), and, to stay on the safe side, the
// characters older .NET versions also trimmed (zero-width space, joiners,
// word joiner, byte order mark, Mongolian vowel separator).
func runnerSpace(r rune) bool {
	switch r {
	case '\u180e', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r)
}

// runnerLines splits out as the runner reads a step's log: at \n, \r and
// \r\n (.NET's StreamReader.ReadLine).
func runnerLines(out string) []string {
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' })
}

// runnerCommand returns the first line of out the runner would read as a
// workflow command: "##[" anywhere (its older form, ActionCommand.TryParse),
// or "::" first once the line's leading spaces are trimmed
// (ActionCommand.TryParseV2). The oracle is wider than the runner (it
// needs neither a known command name nor a closing "]" or "::"), so
// whatever passes it passes the runner.
func runnerCommand(out string) (string, bool) {
	for _, line := range runnerLines(out) {
		if strings.Contains(line, "##[") || strings.HasPrefix(strings.TrimLeftFunc(line, runnerSpace), "::") {
			return line, true
		}
	}
	return "", false
}

// The runner's parser, not the sanitiser's own idea of a blank, decides
// what is a workflow command.
func TestNoLineTheRunnerReadsAsACommand(t *testing.T) {
	for _, in := range runnerSeeds {
		for name, out := range map[string]string{"Line": Line(in), "Text": Text(in), "Commands": Commands(in),
			"CodeSpan": CodeSpan(in), "Markdown": Markdown(in), "CodeBlock": CodeBlock("text", in)} {
			if line, ok := runnerCommand(out); ok {
				t.Errorf("%s(%q) leaves a line the runner reads as a workflow command: %q", name, in, line)
			}
		}
	}
}

// runnerSeeds are the known ways past a sanitiser that trims only space
// and tab: Unicode blanks before "::", "##[" after text, \r as a line end.
var runnerSeeds = []string{
	"\u00a0::warning::x",
	"\u2003::add-mask::x",
	"\u3000::error::x",
	"\ufeff::stop-commands::tok",
	"\u200b::stop-commands::tok",
	"\u1680\u2000\u200a\u202f\u205f::group::x",
	"\u0085::x::",
	"\v\f::x::",
	"a\n\u00a0 ::warning::x",
	"progress ##[stop-commands]TOKEN",
	"50%\r::stop-commands::tok",
	"ok\r\n\u2028::x::y",
}

// FuzzRunnerCommands: whatever the input, the runner reads no workflow
// command in what Line, Text, Commands and the Markdown forms return. Its
// oracle (runnerCommand) models the runner's parser; the seeds are the
// known bypasses and run in every go test.
func FuzzRunnerCommands(f *testing.F) {
	for _, s := range runnerSeeds {
		f.Add(s)
	}
	f.Add("  ::error::x")
	f.Add("wide\u3000space and nbsp\u00a0x") // Unicode blanks for the fuzzer to move before a "::"
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Line": Line(s), "Text": Text(s), "Commands": Commands(s),
			"CodeSpan": CodeSpan(s), "Markdown": Markdown(s)} {
			if line, ok := runnerCommand(out); ok {
				t.Fatalf("%s(%q) leaves a line the runner reads as a workflow command: %q", name, s, line)
			}
		}
	})
}
