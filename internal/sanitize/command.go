package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"al.essio.dev/pkg/shellescape"
)

// Command returns args as a command line to paste into a POSIX shell:
// each argument that needs it single-quoted (shellescape.Quote), so an
// argument "x; touch PWNED #" stays one argument. An argument holding a
// character Line escapes is written in ANSI-C quoting ($'...': bash, zsh,
// ksh and POSIX sh since 2024) with that character escaped, so the line
// shows no control character and still pastes as the same argument.
func Command(args ...string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if hasControl(a, false) {
			out[i] = ansiC(a)
			continue
		}
		out[i] = shellescape.Quote(a)
	}
	return strings.Join(out, " ")
}

// ansiC quotes s as $'...'.
func ansiC(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case escaped(r):
			writeEscape(&b, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
