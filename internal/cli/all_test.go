package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestAllFlagsArgv(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		want    app.AllFlags
		wantErr string
	}{
		{argv: []string{"-e", "dev", "--all"}, want: app.AllFlags{All: true}},
		{argv: []string{"-e", "dev", "--all", "--changed-since", "origin/main", "--stack-parallelism", "2"},
			want: app.AllFlags{All: true, ChangedSince: "origin/main", StackParallelism: 2}},
		{argv: []string{"-e", "dev", "--changed-since", "HEAD"}, wantErr: "--changed-since needs --all"},
		{argv: []string{"-e", "dev", "--stack-parallelism", "2"}, wantErr: "--stack-parallelism needs --all"},
		{argv: []string{"-e", "dev", "--all", "--stack-parallelism", "0"}, wantErr: "--stack-parallelism must be at least 1"},
		{argv: []string{"-e", "dev", "--all", "-s", "shop"}, wantErr: "drop --stack"},
		{argv: []string{"-e", "dev", "--all", "--component", "app/api"}, wantErr: "drop --component"},
		{argv: []string{"--all"}, wantErr: "--environment (-e) is required"},
	} {
		for _, cmd := range []string{"plan", "deploy", "destroy"} {
			var got *app.AllFlags
			var err error
			switch cmd {
			case "plan":
				var o *PlanOptions
				o, _, err = parseCmd(t, false, NewCmdPlan, c.argv...)
				if o != nil {
					got = &o.All
				}
			case "deploy", "destroy":
				newCmd := NewCmdDeploy
				if cmd == "destroy" {
					newCmd = NewCmdDestroy
				}
				var o *DeployOptions
				o, _, err = parseCmd(t, false, newCmd, c.argv...)
				if o != nil {
					got = &o.All
				}
			}
			if c.wantErr != "" {
				if got != nil {
					t.Errorf("%s %v: ran, want an error", cmd, c.argv)
				} else {
					checkUsage(t, err, c.wantErr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %v: %v", cmd, c.argv, err)
			}
			if d := cmp.Diff(c.want, *got); d != "" {
				t.Errorf("%s %v (-want +got):\n%s", cmd, c.argv, d)
			}
		}
	}
	// Flags that name one stack or one plan.
	for argv, want := range map[string]string{
		"-e dev --all --out p.json": "drop --out",
		"-e dev --all --refresh":    "drop --refresh",
		"-e dev --all --destroy":    "drop --destroy",
	} {
		_, _, err := parseCmd(t, false, NewCmdPlan, strings.Fields(argv)...)
		checkUsage(t, err, want)
	}
	_, _, err := parseCmd(t, false, NewCmdDeploy, "-e", "dev", "--all", "--plan", "p.json")
	checkUsage(t, err, "drop --plan")
}

// writeStacks writes a diamond root -> left, right -> leaf under dir.
func writeStacks(t *testing.T, dir string) {
	t.Helper()
	for name, reads := range map[string][]string{"root": nil, "left": {"root"}, "right": {"root"}, "leaf": {"left", "right"}, "ext": {"elsewhere"}} {
		y := "stack: " + name + "\nbackend: {state: file://../.deployer}\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n"
		for _, r := range reads {
			y += "      " + r + ": {kind: StackReference, config: {stack: " + r + "}}\n"
		}
		y += "      c: {kind: Command, command: {create: \"true\"}}\n"
		if err := os.MkdirAll(filepath.Join(dir, "stacks", name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stacks", name, "deployer.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStacksRendersTableJSONAndGraphs(t *testing.T) {
	dir := t.TempDir()
	writeStacks(t, dir)
	discover := func(env string) (*stacks.Set, error) {
		return stacks.Discover(dir, stacks.Options{Env: env, Load: func(p string) (*config.Config, error) { return config.Load(p) }})
	}
	run := func(o StacksOptions) string {
		t.Helper()
		io, out, _ := termui.Test("")
		o.IO, o.Discover = io, discover
		if err := runStacks(&o); err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(out.String(), dir, "DIR")
	}
	table := run(StacksOptions{})
	lines := strings.Split(table, "\n")
	for i, want := range []string{"ext", "root", "left", "right", "leaf"} {
		if f := strings.Fields(lines[i+1]); len(f) < 2 || f[1] != want {
			t.Fatalf("row %d = %q, want stack %s\n%s", i+1, lines[i+1], want, table)
		}
	}
	if !strings.Contains(table, "elsewhere (external)") || !strings.Contains(lines[2], "left, right") {
		t.Errorf("table:\n%s", table)
	}
	mermaid := run(StacksOptions{Graph: "mermaid"})
	for _, want := range []string{"graph LR\n", `s1["root<br/><small>stacks/root</small>"]`, "s1 --> s2\n", "s3 --> s4\n", "x1 -.-> s0\n", `x1["elsewhere<br/><small>external</small>"]:::external`} {
		if !strings.Contains(mermaid, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, mermaid)
		}
	}
	dot := run(StacksOptions{Graph: "dot"})
	for _, want := range []string{"digraph stacks {", `"root" -> "left";`, `"right" -> "leaf";`, `"elsewhere" -> "ext" [style=dashed];`} {
		if !strings.Contains(dot, want) {
			t.Errorf("dot lacks %q:\n%s", want, dot)
		}
	}
	js := run(StacksOptions{JSON: true, Env: "dev"})
	for _, want := range []string{`"environment": "dev"`, `"name": "leaf"`, `"depends_on": [
        "left",
        "right"
      ]`, `"external": true`} {
		if !strings.Contains(js, want) {
			t.Errorf("json lacks %q:\n%s", want, js)
		}
	}
}

func TestDeployAllWithoutATerminalNeedsYes(t *testing.T) {
	dir := t.TempDir()
	writeStacks(t, dir)
	t.Chdir(dir)
	io, _, _ := termui.Test("")
	f := app.NewFactory(io)
	f.Getenv = func(string) string { return "" }
	run := app.NewStackOptions(f).RunAll
	err := run(context.Background(), app.AllRequest{Op: runner.OpDeploy, Env: "dev"})
	checkUsage(t, err, "deploy --all needs confirmation but there is no terminal to ask on: pass --yes")
	err = run(context.Background(), app.AllRequest{Op: runner.OpPlan, Env: "prod"})
	checkUsage(t, err, `no stack under`)
}
