//go:build unix

// Package e2e runs the deployer binary as a user would: real processes,
// real files, the local file:// backends.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deployer-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "deployer")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/deployer")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build deployer:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// project is a directory with a deployer.yaml.
type project struct {
	t   *testing.T
	dir string
	env []string
}

func newProject(t *testing.T, yaml string) *project {
	t.Helper()
	p := &project{t: t, dir: t.TempDir()}
	p.write("deployer.yaml", yaml)
	return p
}

func (p *project) write(name, content string) {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) read(name string) []byte {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, name))
	if err != nil {
		p.t.Fatal(err)
	}
	return data
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

func (p *project) command(args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = p.dir
	// A runner's OIDC endpoint (a job with id-token: write running these
	// tests) is not the fake GitHub's: tests that want one name it.
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "GITHUB_ACTIONS=", "DEPLOYER_BACKEND_STATE=", "DEPLOYER_BACKEND_LOCK=",
		"ACTIONS_ID_TOKEN_REQUEST_URL=", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=")
	cmd.Env = append(cmd.Env, p.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// run runs deployer to completion.
func (p *project) run(args ...string) result {
	p.t.Helper()
	cmd := p.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run deployer %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// mustRun runs deployer and fails the test unless it exits with code.
func (p *project) mustRun(code int, args ...string) result {
	p.t.Helper()
	r := p.run(args...)
	if r.code != code {
		p.t.Fatalf("deployer %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// syncBuffer is safe to read while a process or goroutine writes it.
type syncBuffer = testenv.SyncBuffer

// background starts deployer; wait() returns its result.
type bgRun struct {
	cmd       *exec.Cmd
	out, errb *syncBuffer
	done      chan struct{}
	res       result
}

func (p *project) start(args ...string) *bgRun {
	p.t.Helper()
	b := &bgRun{cmd: p.command(args...), out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.errb
	if err := b.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	go func() {
		err := b.cmd.Wait()
		b.res = result{stdout: b.out.String(), stderr: b.errb.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			b.res.code = ee.ExitCode()
			if b.res.code < 0 {
				b.res.code = -1
			}
		}
		close(b.done)
	}()
	p.t.Cleanup(func() {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	})
	return b
}

func (b *bgRun) wait(t *testing.T, within time.Duration) result {
	t.Helper()
	select {
	case <-b.done:
		return b.res
	case <-time.After(within):
		t.Fatalf("deployer %v did not finish within %s", b.cmd.Args[1:], within)
		return result{}
	}
}

// eventually polls cond every 50 ms until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stateDoc is the subset of state.json the tests read.
type stateDoc struct {
	Serial    int64  `json:"serial"`
	Lineage   string `json:"lineage"`
	Resources map[string]struct {
		Kind          string         `json:"kind"`
		Status        string         `json:"status"`
		DesiredConfig map[string]any `json:"desired_config"`
		Outputs       map[string]any `json:"outputs"`
	} `json:"resources"`
	DeploymentHistory []struct {
		DeploymentID string `json:"deployment_id"`
		Type         string `json:"type"`
		Status       string `json:"status"`
		Serial       int64  `json:"serial"`
		RestoredFrom int64  `json:"restored_from"`
	} `json:"deployment_history"`
	Checksums map[string]string `json:"checksums"`
}

func (p *project) state(stack, env string) stateDoc {
	p.t.Helper()
	var st stateDoc
	if err := json.Unmarshal(p.read(filepath.Join(".deployer/stacks", stack, env, "state.json")), &st); err != nil {
		p.t.Fatal(err)
	}
	return st
}

type lockRow struct {
	LockKey       string `json:"lockKey"`
	LockID        string `json:"lockId"`
	LockedBy      string `json:"lockedBy"`
	LastHeartbeat int64  `json:"lastHeartbeat"`
	Status        string `json:"status"`
	Level         string `json:"level"`
	PIDNotRunning bool   `json:"pid_not_running"`
	Metadata      struct {
		PID          int    `json:"pid"`
		Hostname     string `json:"hostname"`
		Operation    string `json:"operation"`
		DeploymentID string `json:"deployment_id"`
	} `json:"metadata"`
}

func (p *project) locks() []lockRow {
	p.t.Helper()
	r := p.mustRun(0, "state", "locks", "--json")
	var out struct {
		Locks []lockRow `json:"locks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		p.t.Fatalf("state locks --json: %v\n%s", err, r)
	}
	return out.Locks
}
