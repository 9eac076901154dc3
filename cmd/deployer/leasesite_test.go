package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
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

// The CLI passes policy directories and flags; loading and compiling Rego
// is the use case's (deploy.PolicyCheck, policy.TestDirs): no file of
// internal/cli, its wiring (internal/app) or internal/termui calls
// policy.Load, policy.Open or a Set's Compile.
func TestTheCLILoadsNoRego(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, pkg := range []string{"cli", "app", "termui"} {
		dir := filepath.Join("..", "..", "internal", pkg)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	if len(files) < 10 {
		t.Fatalf("parsed %d files of internal/{cli,app,termui}", len(files))
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := exprString(sel.X) + "." + sel.Sel.Name
			if name == "policy.Load" || name == "policy.Open" || sel.Sel.Name == "Compile" {
				t.Errorf("%s: the CLI calls %s; pass the directories to the use case (deploy.PolicyCheck.Dirs)", fset.Position(call.Pos()), name)
			}
			return true
		})
	}
}
