package main

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Every error a user meets exits with the code docs/exit-codes.md gives it,
// wrapped or joined, the most specific code first when several apply.
func TestErrorsExitWithTheDocumentedCodes(t *testing.T) {
	conflict := &statestore.ConflictError{Location: "file://x", Reason: "state was written by someone else since it was read"}
	held := &lockmgr.HeldError{Record: lockmgr.Record{LockKey: "stack:shop:env:dev"}}
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"plain", errors.New("component web failed"), 1},
		{"invalid config", &config.ValidationError{Problems: []config.Problem{{Msg: "bad"}}}, 1},
		{"usage", &exitcode.UsageError{Msg: "bad name"}, 2},
		{"unknown target", fmt.Errorf("deploy: %w", &deploy.TargetError{Msg: "no component x"}), 2},
		{"cobra usage", errors.New(`unknown flag: --nope`), 2},
		{"explicit", &exitcode.ExitCodeError{Code: 2}, 2},
		{"explicit beats the rest", errors.Join(&exitcode.ExitCodeError{Code: 1}, conflict), 1},
		{"lock held", fmt.Errorf("deploy: %w", held), 3},
		{"lease lost", fmt.Errorf("lock exec: %w", lockmgr.ErrLockLost), 3},
		{"state conflict", fmt.Errorf("save: %w", conflict), 4},
		{"checksum", &statestore.ChecksumError{Location: "file://x", Field: "resources"}, 4},
		{"saved plan stale", fmt.Errorf("deploy --plan: %w", deploy.ErrPlanStale), 4},
		{"state lease lost", fmt.Errorf("save: %w", statestore.ErrLeaseLost), 4},
		{"denied", &policy.DeniedError{Results: []policy.Result{{Policy: "p", Deny: []string{"no"}}}}, 5},
		{"not overridable", fmt.Errorf("override: %w", &policy.NotOverridableError{Policy: "p"}), 5},
		{"protected", &plan.ProtectedError{}, 6},
		{"dependents", &plan.DependentsError{}, 6},
		{"skipped", &deploy.SkippedError{RunID: "1"}, 7},
		{"ctrl-c", fmt.Errorf("apply: %w", context.Canceled), 130},
		{"cancelled", deploy.ErrCancelled, 130},
		{"cancelled apply", &deploy.ApplyError{Err: errors.New("stopped"), Cancelled: true}, 130},
		{"failed apply", &deploy.ApplyError{Err: fmt.Errorf("save: %w", conflict)}, 4},
		{"cancelled beats a conflict", &deploy.ApplyError{Err: conflict, Cancelled: true}, 130},
		{"state beats a held lock", errors.Join(held, conflict), 4},
		{"lock beats policy", errors.Join(&policy.DeniedError{}, held), 3},
		{"cancelled run of stacks", &runner.StacksError{Cancelled: true}, 130},
		{"failed run of stacks", &runner.StacksError{Failed: []string{"a"}}, 1},
		{"a component's command exited 7", fmt.Errorf("component app/db: %w", childExit(t, 7)), 1},
		{"a component's command exited 3", &deploy.ApplyError{Err: childExit(t, 3)}, 1},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("%s: %v exits %d, want %d", c.name, c.err, got, c.want)
		}
	}
}

// childExit is the *exec.ExitError of a child that exited with code: its
// ExitCode method is the child's, not deployer's.
func childExit(t *testing.T, code int) error {
	t.Helper()
	err := exec.Command("sh", "-c", fmt.Sprintf("exit %d", code)).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code {
		t.Fatalf("sh -c 'exit %d': %v", code, err)
	}
	return err
}

// The codes in docs/exit-codes.md's table are exactly exitcode's.
func TestExitCodeTableMatchesTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	want := []int{exitcode.OK, exitcode.Error, exitcode.Usage, exitcode.LockHeld, exitcode.State,
		exitcode.Policy, exitcode.Refused, exitcode.Skipped, exitcode.Cancelled}
	if !slices.Equal(documented, want) {
		t.Errorf("docs/exit-codes.md lists codes %v, internal/exitcode has %v", documented, want)
	}
	if app.ExitSkipped != exitcode.Skipped {
		t.Errorf("app.ExitSkipped is %d, exitcode.Skipped %d", app.ExitSkipped, exitcode.Skipped)
	}
}

// main maps errors through the codes they carry: it imports no domain
// package to know them (docs/exit-codes.md).
func TestMainImportsNoDomainPackageForExitCodes(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"internal/cli", "internal/app", "internal/termui", "internal/exitcode", "internal/proc", "internal/termguard"}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rest, ok := strings.CutPrefix(p, module)
		if ok && !slices.Contains(allowed, rest) {
			t.Errorf("main.go imports %s; map its errors' exit codes with an ExitCode method instead", p)
		}
	}
}
