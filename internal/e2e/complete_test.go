//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completions runs deployer __complete ARGS and returns the suggestions
// (without the directive line) and the directive.
func (p *project) completions(args ...string) ([]string, string) {
	p.t.Helper()
	r := p.mustRun(0, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// Names complete from deployer.yaml without a backend: the state backend
// named here does not exist, and nothing is created.
func TestShellCompletionOfNamesFromDeployerYAML(t *testing.T) {
	p := newProject(t, strings.Replace(shopYAML, "backend:\n", "backend:\n  state: file://./never\n  lock: file://./never\n", 1))
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"deploy", "-e", ""}, []string{"dev", "prod"}},
		{[]string{"plan", "--environment", "p"}, []string{"prod"}},
		{[]string{"history", "-s", ""}, []string{"shop"}},
		{[]string{"deploy", "-e", "dev", "--service", ""}, []string{"app", "base"}},
		{[]string{"plan", "-e", "dev", "--component", ""}, []string{"app/api", "app/db", "base/net"}},
		{[]string{"plan", "-e", "dev", "--component", "app/api,app/"}, []string{"app/api,app/db"}},
		{[]string{"destroy", "-e", "dev", "--exclude", "a"}, []string{"app", "app/api", "app/db"}},
		{[]string{"unlock", "-e", "dev", "--component", "base/"}, []string{"base/net"}},
	}
	for _, c := range cases {
		got, directive := p.completions(c.args...)
		if !slices.Equal(got, c.want) || directive != ":4" {
			t.Errorf("__complete %q: got %q %s, want %q :4 (no file names)", c.args, got, directive, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "never")); err == nil {
		t.Fatal("completion created the state backend's directory")
	}

	// Saved plans: the files plan --out wrote (not other files), and directories.
	p.write("step.sh", stepScript)
	p.write("plans/notes.json", `{"format_version": "something else"}`)
	p.write("plans/readme.txt", "dev")
	p.mustRun(0, "plan", "-e", "dev", "--out", "plans/dev.plan")
	if got, directive := p.completions("show", ""); !slices.Equal(got, []string{"plans/"}) || directive != ":6" {
		t.Errorf("__complete show '': got %q %s, want the directory, no space after it", got, directive)
	}
	if got, _ := p.completions("deploy", "--plan", "plans/"); !slices.Equal(got, []string{"plans/dev.plan"}) {
		t.Errorf("__complete deploy --plan plans/: got %q, want the saved plan only", got)
	}
}

// DEPLOYER_ENVIRONMENT and DEPLOYER_STACK stand for -e and -s; the flags
// win. An unknown command suggests the one other tools call that.
func TestEnvironmentVariableDefaultsAndCommandSuggestions(t *testing.T) {
	p := newProject(t, shopYAML)
	p.write("step.sh", stepScript)
	if r := p.mustRun(2, "plan"); !strings.Contains(r.stderr, "--environment (-e) is required (or set DEPLOYER_ENVIRONMENT)") {
		t.Fatalf("plan without -e:\n%s", r)
	}
	p.env = []string{"DEPLOYER_ENVIRONMENT=prod"}
	p.mustRun(0, "deploy", "--yes")
	if !strings.Contains(p.mustRun(0, "plan", "-e", "dev").stdout, "replicas: 2") {
		t.Fatal("plan -e dev with DEPLOYER_ENVIRONMENT=prod: want dev planned (the flag wins)")
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".deployer/stacks/shop/prod/state.json")); err != nil {
		t.Fatalf("deploy with DEPLOYER_ENVIRONMENT=prod wrote no prod state: %v", err)
	}
	p.env = append(p.env, "DEPLOYER_STACK=other")
	if r := p.mustRun(0, "history", "-s", "shop"); !strings.Contains(r.stdout, "deploy  success") {
		t.Fatalf("history -s shop with DEPLOYER_STACK=other:\n%s", r)
	}
	if r := p.run("history"); r.code == 0 || !strings.Contains(r.stderr, "other/prod") {
		t.Fatalf("history with DEPLOYER_STACK=other: want the other stack's (missing) state:\n%s", r)
	}

	for cmd, want := range map[string]string{"apply": "deploy", "preview": "plan", "rollback": "restore", "deplyo": "deploy"} {
		r := p.mustRun(2, cmd)
		if !strings.Contains(r.stderr, "Did you mean this?\n\t"+want+"\n") {
			t.Errorf("deployer %s: want a suggestion of %s:\n%s", cmd, want, r)
		}
	}
}

// The positional arguments of state rm, state mv, import and output
// complete too, from deployer.yaml alone: component addresses (state mv
// also takes services), the stack's output names; an address already
// given is not offered again, and an argument past the last completes
// nothing.
func TestShellCompletionOfPositionalArguments(t *testing.T) {
	p := newProject(t, strings.Replace(strings.Replace(shopYAML, "backend:\n", "backend:\n  state: file://./never\n  lock: file://./never\n", 1),
		"environments:\n", "outputs: {api_url: \"${app/api.url}\", db_host: \"${app/db.host}\"}\nenvironments:\n", 1))
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"state", "rm", "-e", "dev", ""}, []string{"app/api", "app/db", "base/net"}},
		{[]string{"state", "rm", "-e", "dev", "app/api", "app/"}, []string{"app/db"}},
		{[]string{"state", "mv", "-e", "dev", "a"}, []string{"app", "app/api", "app/db"}},
		{[]string{"state", "mv", "-e", "dev", "app/db", "app/"}, []string{"app/api"}},
		{[]string{"state", "mv", "-e", "dev", "app/db", "app/api", ""}, []string{}},
		{[]string{"import", "-e", "dev", "b"}, []string{"base/net"}},
		{[]string{"import", "-e", "dev", "base/net", ""}, []string{}},
		{[]string{"output", "-e", "dev", ""}, []string{"api_url", "db_host"}},
		{[]string{"output", "-e", "dev", "api_url", ""}, []string{}},
	}
	for _, c := range cases {
		got, directive := p.completions(c.args...)
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, c.want) || directive != ":4" {
			t.Errorf("__complete %q: got %q %s, want %q :4 (no file names)", c.args, got, directive, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "never")); err == nil {
		t.Fatal("completion created the state backend's directory")
	}
}

// An environment from DEPLOYER_ENVIRONMENT that is not a valid name, or
// not one of deployer.yaml, is refused naming the variable, so the user
// knows where "Prod" came from; from -e the error is as before.
func TestAnEnvironmentFromTheVariableIsNamedInItsError(t *testing.T) {
	p := newProject(t, shopYAML)
	p.write("step.sh", stepScript)
	p.env = []string{"DEPLOYER_ENVIRONMENT=Prod"}
	for _, args := range [][]string{{"plan"}, {"deploy", "--yes"}, {"history"}} {
		r := p.mustRun(2, args...)
		if !strings.Contains(r.stderr, `DEPLOYER_ENVIRONMENT: environment "Prod"`) {
			t.Errorf("%v with DEPLOYER_ENVIRONMENT=Prod:\n%s", args, r)
		}
	}
	if r := p.mustRun(2, "plan", "--all"); !strings.Contains(r.stderr, `DEPLOYER_ENVIRONMENT=Prod: no stack under`) {
		t.Errorf("plan --all with DEPLOYER_ENVIRONMENT=Prod:\n%s", r)
	}
	p.env = []string{"DEPLOYER_ENVIRONMENT=staging"}
	if r := p.mustRun(2, "plan"); !strings.Contains(r.stderr, `DEPLOYER_ENVIRONMENT: environment "staging" is not in deployer.yaml`) {
		t.Errorf("plan with DEPLOYER_ENVIRONMENT=staging:\n%s", r)
	}
	p.env = nil
	if r := p.mustRun(2, "plan", "-e", "staging"); strings.Contains(r.stderr, "DEPLOYER_ENVIRONMENT") {
		t.Errorf("plan -e staging names the variable:\n%s", r)
	}
}
