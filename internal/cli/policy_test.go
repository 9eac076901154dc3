package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdPolicyTest(t *testing.T) {
	for _, tt := range []struct {
		name    string
		argv    []string
		want    PolicyTestOptions
		wantErr string
	}{
		{name: "one directory", argv: []string{"policy/"}, want: PolicyTestOptions{Dirs: []string{"policy/"}}},
		{name: "two", argv: []string{"a", "b"}, want: PolicyTestOptions{Dirs: []string{"a", "b"}}},
		{name: "none", wantErr: "policy test needs the directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			var got *PolicyTestOptions
			err := parse(t, NewCmdPolicyTest(f, func(_ context.Context, o *PolicyTestOptions) error { got = o; return nil }), tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestRunPolicyTest(t *testing.T) {
	ios, out, _ := termui.Test("")
	if err := runPolicyTest(context.Background(), &PolicyTestOptions{IO: ios, Dirs: []string{"../../examples/policy"}}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "PASS  deployer.rds_protection_test.test_unencrypted_storage_is_denied (../../examples/policy/rds_protection_test.rego:") ||
		!strings.Contains(out.String(), " passed, 0 failed, 0 errors, 0 skipped\n") {
		t.Errorf("out:\n%s", out)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package deployer.p\n\ndeny contains \"no\" if false\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p_test.rego"), []byte("package deployer.p_test\n\nimport data.deployer.p\n\ntest_denies if p.deny[\"no\"]\n"), 0o644)
	out.Reset()
	err := runPolicyTest(context.Background(), &PolicyTestOptions{IO: ios, Dirs: []string{dir}})
	if err == nil || err.Error() != "1 of 1 policy tests did not pass" || !strings.Contains(out.String(), "FAIL  deployer.p_test.test_denies (") {
		t.Errorf("err = %v\n%s", err, out)
	}
}
