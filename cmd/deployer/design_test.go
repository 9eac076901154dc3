package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/design.md#package-map is drawn from the code: every package it
// names exists, every package of the module is named there, and each has
// a doc comment saying what it owns ("Package x ..." or, for a program,
// "Command x ...").
func TestDesignPackageMapMatchesThePackages(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := packageDocs(t, root)
	if len(docs) < 30 {
		t.Fatalf("found %d packages: the walk did not find the source tree", len(docs))
	}
	design, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, name := range packageMapNames(t, string(design)) {
		pkg := name
		if !strings.Contains(name, "/") { // a suite named by its last element: locktest
			var found []string
			for p := range docs {
				if path.Base(p) == name {
					found = append(found, p)
				}
			}
			if len(found) != 1 {
				t.Errorf("docs/design.md#package-map names %s, which is %d packages (%v): name it by its path", name, len(found), found)
				continue
			}
			pkg = found[0]
		}
		if _, ok := docs[pkg]; !ok {
			t.Errorf("docs/design.md#package-map names %s, which is not a package of the module", name)
			continue
		}
		listed[pkg] = true
	}
	pkgs := make([]string, 0, len(docs))
	for p := range docs {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		if !listed[pkg] {
			t.Errorf("package %s is not on docs/design.md#package-map: add a row saying what it owns", pkg)
		}
		doc := docs[pkg]
		if !strings.HasPrefix(doc, "Package "+path.Base(pkg)+" ") && !strings.HasPrefix(doc, "Command ") {
			t.Errorf("package %s has no doc comment saying what it owns (\"Package %s ...\"): %q", pkg, path.Base(pkg), firstLine(doc))
		}
	}
}

// packageDocs maps each package directory of the module under cmd/ and
// internal/ (slash path) to its package doc comment ("" when none); a
// package of tests only (internal/e2e) has its doc in a test file.
func packageDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	docs, testDocs := map[string]string{}, map[string]string{}
	fset := token.NewFileSet()
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			f, err := parser.ParseFile(fset, p, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			into := docs
			if strings.HasSuffix(p, "_test.go") {
				into = testDocs
			}
			if _, ok := into[rel]; !ok {
				into[rel] = ""
			}
			if f.Doc != nil && into[rel] == "" {
				into[rel] = f.Doc.Text()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for rel, doc := range testDocs {
		if _, ok := docs[rel]; !ok {
			docs[rel] = doc
		}
	}
	return docs
}

// packageMapNames returns the packages named in the first column of the
// table of design's "## Package map" section, braces expanded
// (internal/lockmgr/{file,s3} is two).
func packageMapNames(t *testing.T, design string) []string {
	t.Helper()
	_, section, ok := strings.Cut(design, "\n## Package map\n")
	if !ok {
		t.Fatal("docs/design.md has no \"## Package map\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	tick := regexp.MustCompile("`([^`]+)`")
	var names []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(line[2:], " |")
		for _, m := range tick.FindAllStringSubmatch(cell, -1) {
			names = append(names, expandBraces(m[1])...)
		}
	}
	if len(names) < 30 {
		t.Fatalf("found %d package names in docs/design.md#package-map's table", len(names))
	}
	return slices.Compact(names)
}

func expandBraces(s string) []string {
	i, j := strings.Index(s, "{"), strings.Index(s, "}")
	if i < 0 || j < i {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, expandBraces(s[:i]+alt+s[j+1:])...)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
