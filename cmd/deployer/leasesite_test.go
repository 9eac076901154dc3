package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A lock is taken in one place (lockmgr.Manager.Take: the holder record,
// the acquire, the Acquired line, a release with one bound whose error is
// never dropped; docs/design.md#lock-protocol): no package outside
// internal/lockmgr calls Manager.Acquire itself, guard and lock exec
// included.
func TestLocksAreTakenAtTheOneLeaseSite(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" || rel == "internal/lockmgr" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Acquire" {
					t.Errorf("%s: calls %s.Acquire; take the lease with lockmgr.Manager.Take", fset.Position(call.Pos()), exprString(sel.X))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("parsed %d files: the walk did not find the source tree", files)
	}
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	}
	return "?"
}
