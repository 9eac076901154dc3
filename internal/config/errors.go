package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	File string // config file as the user named it; "" for environment variables
	Line int    // 1-based line in File; 0 when unknown
	Path string // YAML path ("services.api.components.db.kind") or variable name
	Msg  string // what is wrong, then the fix in parentheses
}

// String renders "FILE:LINE: PATH: MSG", leaving out the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteString(":" + strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError lists every problem found in deployer.yaml or in the
// DEPLOYER_* variables, ordered by line. Nothing has touched a backend when
// it is returned (docs/configuration.md#validation).
type ValidationError struct {
	File     string
	Problems []Problem
}

// Error is the single problem, or a header and one problem per line.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].String()
	}
	lines := make([]string, 0, len(e.Problems)+1)
	head := "configuration"
	if e.File != "" {
		head = e.File
	}
	lines = append(lines, fmt.Sprintf("%s has %d problems:", head, len(e.Problems)))
	for _, p := range e.Problems {
		lines = append(lines, "  "+p.String())
	}
	return strings.Join(lines, "\n")
}

func (e *ValidationError) sort() {
	sort.SliceStable(e.Problems, func(i, j int) bool {
		a, b := e.Problems[i], e.Problems[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Path < b.Path
	})
}

// suggest returns the candidate closest to s (edit distance at most 2, or a
// case-insensitive match), or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return c
		}
		if d := levenshtein(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// didYouMean is " (did you mean "x"?)" or the alternative text when nothing is close.
func didYouMean(s string, candidates []string, otherwise string) string {
	if m := suggest(s, candidates); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	if otherwise == "" {
		return ""
	}
	return " (" + otherwise + ")"
}
