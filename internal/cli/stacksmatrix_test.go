package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/termui"
)

// writeMatrixStacks writes one deployer.yaml per stack under dir: name reads the
// stacks of reads[name]; a stack in devless lacks environment dev.
func writeMatrixStacks(t *testing.T, dir string, reads map[string][]string, devless ...string) {
	t.Helper()
	for name, rs := range reads {
		envs := "environments: {dev: {}, prod: {}}\n"
		for _, d := range devless {
			if d == name {
				envs = "environments: {prod: {}}\n"
			}
		}
		var b strings.Builder
		// One state backend for all: a reference reads the reader's own.
		fmt.Fprintf(&b, "stack: %s\nbackend: {state: file://../.deployer}\n%sservices:\n  s:\n    components:\n      c: {kind: Command, command: {create: \"true\"}}\n", name, envs)
		for _, r := range rs {
			fmt.Fprintf(&b, "      ref-%s: {kind: StackReference, config: {stack: %s}}\n", r, r)
		}
		if err := os.MkdirAll(filepath.Join(dir, "d-"+name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "d-"+name, "deployer.yaml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStacksMatrixListsEachStackWithEveryUpstreamStackOfTheRun(t *testing.T) {
	dir := t.TempDir()
	// A diamond root -> left, right -> leaf, a stack alone, and old, which
	// reads root but has no dev environment: not in a dev run.
	writeMatrixStacks(t, dir, map[string][]string{"root": nil, "left": {"root"}, "right": {"root"}, "leaf": {"left", "right"}, "alone": nil, "old": {"root"}}, "old")
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	opts := &StacksOptions{IO: &termui.IOStreams{Out: &out, ErrOut: &errOut}, Env: "dev", Matrix: true,
		Load: func(p string) (*config.Config, error) { return config.Load(p) }}
	if err := runStacksMatrix(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("the matrix takes %d lines, want one (a GITHUB_OUTPUT value): %q", n, out.String())
	}
	var got struct {
		Include []termui.MatrixEntry `json:"include"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	want := []termui.MatrixEntry{
		{Stack: "alone", Dir: "d-alone", Upstream: []string{}},
		{Stack: "root", Dir: "d-root", Upstream: []string{}},
		{Stack: "left", Dir: "d-left", Upstream: []string{"root"}},
		{Stack: "right", Dir: "d-right", Upstream: []string{"root"}},
		{Stack: "leaf", Dir: "d-leaf", Upstream: []string{"root", "left", "right"}},
	}
	if diff := cmp.Diff(want, got.Include); diff != "" {
		t.Errorf("matrix (-want +got):\n%s", diff)
	}
}

func TestStacksMatrixFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--matrix"}, "--matrix needs -e ENV"},
		{[]string{"--matrix", "-e", "dev", "--graph", "dot"}, "drop --json and --graph"},
		{[]string{"--changed-since", "HEAD"}, "--changed-since goes with --matrix"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f := &app.Factory{IO: &termui.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
			var got *StacksOptions
			cmd := NewCmdStacks(f, func(_ context.Context, o *StacksOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			checkUsage(t, err, tc.wantErr)
			if got != nil {
				t.Error("run called after a usage error")
			}
		})
	}
}
