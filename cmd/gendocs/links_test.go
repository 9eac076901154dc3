package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Every reference between the user docs (docs/*.md and README.md) lands:
// the file exists and, when the reference names a section, the file has a
// heading with that GitHub anchor. References are Markdown links and the
// bare `docs/x.md#section` mentions the docs use in prose.
func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		for _, ref := range docRefs(t, f) {
			if msg := checkRef(f, ref, anchors); msg != "" {
				t.Errorf("%s:%d: %s", strings.TrimPrefix(f, "../../"), ref.line, msg)
			}
		}
	}
}

// The code's comments and messages cite docs sections as
// docs/x.md#section: each of those lands too.
func TestCodeDocRefsResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	for _, dir := range []string{"../../cmd", "../../internal"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				for _, m := range codeRef.FindAllStringSubmatch(line, -1) {
					ref := docRef{line: i + 1, target: m[1], anchor: m[2], bare: true}
					if msg := checkRef(path, ref, anchors); msg != "" {
						t.Errorf("%s:%d: %s", strings.TrimPrefix(path, "../../"), ref.line, msg)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

type docRef struct {
	line   int
	target string // a path relative to the file's directory, "" for the file itself
	anchor string // without '#'
	bare   bool   // a mention in prose: relative to the file, the repository or docs/
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRef = regexp.MustCompile(`\b(docs/[A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?`)
	bareRef = regexp.MustCompile(`(?:^|[\s(` + "`" + `"'])((?:\.\./|docs/)?[A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?`)
)

// docRefs returns the references of the file at path, outside code blocks.
func docRefs(t *testing.T, path string) []docRef {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var refs []docRef
	fenced := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			refs = append(refs, docRef{line: i + 1, target: target, anchor: anchor})
		}
		rest := mdLink.ReplaceAllString(line, "]")
		for _, m := range bareRef.FindAllStringSubmatch(rest, -1) {
			refs = append(refs, docRef{line: i + 1, target: m[1], anchor: m[2], bare: true})
		}
	}
	return refs
}

const repoRoot = "../.."

// checkRef returns what is wrong with ref in the file from, "" if nothing.
func checkRef(from string, ref docRef, anchors map[string]map[string]bool) string {
	target := from
	if ref.target != "" {
		candidates := []string{filepath.Join(filepath.Dir(from), ref.target)}
		if ref.bare {
			candidates = append(candidates, filepath.Join(repoRoot, ref.target), filepath.Join(repoRoot, "docs", ref.target))
		}
		target = ""
		for _, c := range candidates {
			if _, err := os.Stat(c); err == nil {
				target = c
				break
			}
		}
		if target == "" {
			return fmt.Sprintf("%s: no such file", ref.target)
		}
	}
	if ref.anchor == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	if anchors[target] == nil {
		anchors[target] = headingAnchors(target)
	}
	if !anchors[target][ref.anchor] {
		return fmt.Sprintf("%s#%s: %s has no such section", ref.target, ref.anchor, strings.TrimPrefix(target, repoRoot+"/"))
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of the file
// at path: the heading's text in lower case, without punctuation, spaces
// as hyphens, and -1, -2... after a repeated one.
func headingAnchors(path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := githubSlug(text)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// githubSlug is GitHub's anchor for a heading's text.
func githubSlug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
