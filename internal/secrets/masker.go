package secrets

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// Hidden replaces a secret value in text output (GitHub Actions' mask).
const Hidden = "***"

// MinMaskLength is the shortest secret text a Masker hides: shorter values
// (a "1", a "yes") would blank out ordinary output. They are still encrypted
// in state and shown as (sensitive) in plans.
const MinMaskLength = sensitive.MinMaskLength

// Strings returns the texts inside v (v itself, or every leaf of a map or
// list, secret wrappers unwrapped) as they are printed (sensitive.Texts):
// these are the texts a Masker hides, so a secret of any JSON type is
// masked (docs/secrets.md#what-is-a-secret).
func Strings(v any) []string { return sensitive.Texts(v) }

// Masker replaces known secret values by "***" in text: component output as
// it streams, errors, the audit log (docs/secrets.md). Values are added as
// they become known (from deployer.yaml, from opened state). Under GitHub
// Actions it also announces each value once with ::add-mask::. Safe for
// concurrent use; the zero Masker is not usable, use NewMasker.
type Masker struct {
	mu       sync.RWMutex
	values   map[string]bool
	announce io.Writer
	// An index for Mask and Contains: a bit per two-byte prefix of a
	// value, and the values by prefix (longest first), so a string is
	// scanned once whatever the number of values.
	prefixes *[1 << 16 / 64]uint64
	byPrefix map[uint16][]string
}

// NewMasker returns a Masker that knows no value yet.
func NewMasker() *Masker { return &Masker{values: map[string]bool{}} }

// AnnounceTo makes the Masker write "::add-mask::VALUE" to w once per value
// (GitHub Actions' workflow command; the runner reads it on stdout and
// stderr). Values already known are announced now.
func (m *Masker) AnnounceTo(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.announce = w
	for _, v := range slices.Sorted(maps.Keys(m.values)) {
		m.announceLocked(v)
	}
}

func (m *Masker) announceLocked(v string) {
	if m.announce == nil {
		return
	}
	for _, line := range pieces(v) {
		// The runner unescapes %25, %0D and %0A in a command's data: the
		// line is escaped so the runner masks it as it is printed.
		fmt.Fprintf(m.announce, "::add-mask::%s\n", strings.ReplaceAll(line, "%", "%25"))
	}
}

// pieces returns the lines of v (split at \n and \r, as the GitHub Actions
// runner splits a log) that are long enough to mask.
func pieces(v string) []string {
	var out []string
	for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if len(line) >= MinMaskLength {
			out = append(out, line)
		}
	}
	return out
}

// Add makes the Masker hide each value (and, when they differ, its
// JSON-escaped form and each of its lines). Values shorter than
// MinMaskLength are not added. A value that contains one already known (a
// token "prod-9f8e" next to a name "prod") is added too: Mask hides every
// byte of every known value, whatever their order (docs/secrets.md).
func (m *Masker) Add(values ...string) {
	if m == nil {
		return
	}
	var add []string
	m.mu.RLock()
	for _, v := range values {
		if len(v) >= MinMaskLength && !m.values[v] {
			add = append(add, v)
		}
	}
	m.mu.RUnlock()
	if len(add) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range add {
		if m.values[v] {
			continue
		}
		m.announceLocked(v)
		m.insertLocked(v)
		if b, err := json.Marshal(v); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != v {
				m.insertLocked(esc)
			}
		}
		if strings.ContainsAny(v, "\n\r") {
			for _, line := range pieces(v) {
				m.insertLocked(line)
			}
		}
	}
}

// insertLocked adds v to the values and the prefix index.
func (m *Masker) insertLocked(v string) {
	if m.values[v] {
		return
	}
	m.values[v] = true
	if m.prefixes == nil {
		m.prefixes, m.byPrefix = new([1 << 16 / 64]uint64), map[uint16][]string{}
	}
	p := uint16(v[0])<<8 | uint16(v[1])
	m.prefixes[p/64] |= 1 << (p % 64)
	// Longest first: at one position the longest known value decides.
	list := append(m.byPrefix[p], v)
	slices.SortFunc(list, func(a, b string) int { return len(b) - len(a) })
	m.byPrefix[p] = list
}

// Mask returns s with every known value replaced by "***". Every byte of
// every occurrence of every value is hidden: overlapping or adjacent
// occurrences (a value inside a longer one, two values sharing bytes)
// become one "***", so no part of a secret is left in the text.
func (m *Masker) Mask(s string) string {
	if m == nil || len(s) < MinMaskLength {
		return s
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.prefixes == nil {
		return s
	}
	var b strings.Builder
	last, start, end := 0, 0, -1 // s[:last] is written; s[start:end] is the hidden run being grown
	for i := 0; i+1 < len(s); i++ {
		p := uint16(s[i])<<8 | uint16(s[i+1])
		if m.prefixes[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, v := range m.byPrefix[p] {
			if !strings.HasPrefix(s[i:], v) {
				continue
			}
			switch {
			case end < 0:
				start, end = i, i+len(v)
			case i > end:
				b.WriteString(s[last:start])
				b.WriteString(Hidden)
				last, start, end = end, i, i+len(v)
			case i+len(v) > end:
				end = i + len(v)
			}
			break // the longest value at i covers the others there
		}
	}
	if end < 0 {
		return s
	}
	b.WriteString(s[last:start])
	b.WriteString(Hidden)
	b.WriteString(s[end:])
	return b.String()
}

// Contains reports whether s holds a known value.
func (m *Masker) Contains(s string) bool {
	if m == nil || len(s) < MinMaskLength {
		return false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.containsLocked(s)
}

func (m *Masker) containsLocked(s string) bool {
	if m.prefixes == nil {
		return false
	}
	for i := 0; i+1 < len(s); i++ {
		p := uint16(s[i])<<8 | uint16(s[i+1])
		if m.prefixes[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, v := range m.byPrefix[p] {
			if strings.HasPrefix(s[i:], v) {
				return true
			}
		}
	}
	return false
}

// Len returns how many texts the Masker hides.
func (m *Masker) Len() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.values)
}

// Writer returns a writer that masks each write before passing it to w.
// Writers of progress write whole lines at a time (the Command engine's
// streamer writes one line per call), so a value is never split across
// two writes.
func (m *Masker) Writer(w io.Writer) io.Writer { return &maskWriter{m: m, w: w} }

type maskWriter struct {
	m *Masker
	w io.Writer
}

func (mw *maskWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(mw.w, mw.m.Mask(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// EnvironSecrets returns the values of env ("NAME=value" entries) that are
// known secrets of the CI environment (sensitive.IsKnownSecretVar: the CI's
// tokens, AWS secret keys): the Masker is given them before any output.
func EnvironSecrets(env []string) []string {
	var out []string
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && sensitive.IsKnownSecretVar(strings.ToUpper(name)) {
			out = append(out, v)
		}
	}
	return out
}
