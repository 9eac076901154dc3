package policy

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
)

// TestTimeout bounds each Rego unit test (docs/policy.md#testing).
const TestTimeout = 10 * time.Second

// TestSummary counts the Rego unit tests a Test run ran.
type TestSummary struct {
	Passed, Failed, Errored, Skipped int
}

// Test runs the Rego unit tests (rules named test_*) of every .rego file
// of the Set with OPA's test runner, under the same Capabilities as
// evaluation, and writes one line per test to w ("PASS", "FAIL", "ERROR"
// and "SKIP" with the test's package, name, file and line; a failure's
// print output indented below it) and a summary line. Errors: a compile
// error naming the file and line; no test at all.
func (s *Set) Test(ctx context.Context, w io.Writer) (TestSummary, error) {
	var sum TestSummary
	modules := make(map[string]*ast.Module, len(s.Files))
	for _, f := range s.Files {
		modules[f.Path] = f.Module
	}
	c := ast.NewCompiler().WithCapabilities(Capabilities()).WithDefaultRegoVersion(ast.RegoV1).WithEnablePrintStatements(true)
	ch, err := tester.NewRunner().SetCompiler(c).SetTimeout(TestTimeout).CapturePrintOutput(true).
		SetDefaultRegoVersion(ast.RegoV1).SetModules(modules).RunTests(ctx, nil)
	if err != nil {
		return sum, fmt.Errorf("policy test: %w", err)
	}
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
	}
	if c.Failed() {
		return sum, fmt.Errorf("policy test: %w", c.Errors)
	}
	if len(results) == 0 {
		return sum, fmt.Errorf("policy test: no test in %s: a test is a rule named test_... (docs/policy.md#testing)", strings.Join(s.Dirs, ", "))
	}
	slices.SortFunc(results, func(a, b *tester.Result) int {
		if c := strings.Compare(a.Location.File, b.Location.File); c != 0 {
			return c
		}
		return a.Location.Row - b.Location.Row
	})
	for _, r := range results {
		status := "PASS"
		switch {
		case r.Error != nil:
			status = "ERROR"
			sum.Errored++
		case r.Fail:
			status = "FAIL"
			sum.Failed++
		case r.Skip:
			status = "SKIP"
			sum.Skipped++
		default:
			sum.Passed++
		}
		fmt.Fprintf(w, "%-5s %s.%s (%s:%d)\n", status, strings.TrimPrefix(r.Package, "data."), r.Name, r.Location.File, r.Location.Row)
		if r.Error != nil {
			fmt.Fprintf(w, "      %v\n", r.Error)
		}
		if status != "PASS" && len(r.Output) > 0 {
			for line := range strings.Lines(string(r.Output)) {
				fmt.Fprintf(w, "      %s", line)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d errors, %d skipped\n", sum.Passed, sum.Failed, sum.Errored, sum.Skipped)
	return sum, nil
}

// TestDirs loads the policy files of dirs (Load) and runs their Rego unit
// tests (Set.Test): `deployer policy test DIR...`.
func TestDirs(ctx context.Context, dirs []string, w io.Writer) (TestSummary, error) {
	s, err := Load(dirs)
	if err != nil {
		return TestSummary{}, err
	}
	return s.Test(ctx, w)
}
