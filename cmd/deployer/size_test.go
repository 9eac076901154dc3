package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// Limits on the size of non-test code (docs/design.md#package-map): a
// function that outgrows maxFuncLines has phases that want names, and a
// file that outgrows maxFileLines holds more than one concern.
const (
	maxFuncLines = 80
	maxFileLines = 500
)

// TestNoFunctionOrFileOutgrowsItsLimit reads every non-test Go file of
// the repository (generated files aside) and names each function longer
// than maxFuncLines and each file longer than maxFileLines.
func TestNoFunctionOrFileOutgrowsItsLimit(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	forEachSource(t, root, []string{"cmd", "internal", "scripts"}, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if n := fset.Position(f.End()).Line; n > maxFileLines {
			t.Errorf("%s has %d lines (at most %d): split it by concern", rel, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s has %d lines (at most %d): name its phases", rel, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
}
