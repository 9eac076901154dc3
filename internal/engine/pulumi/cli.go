package pulumi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/proc"
)

// MinCLIVersion is the oldest Pulumi CLI the engine accepts.
var MinCLIVersion = semver.MustParse("3.100.0")

// InstallURL is where users are sent to install the Pulumi CLI.
const InstallURL = "https://www.pulumi.com/docs/install/"

// CLIMissingError is returned by FindCLI when no usable Pulumi CLI exists.
// Its message names the kinds that need it and the three fixes (docs/pulumi.md#finding-the-pulumi-cli).
type CLIMissingError struct {
	Command string // what was looked for: "pulumi" (PATH) or pulumi.command
	Version string // the version found when it was too old; "" when absent
	Err     error  // the lookup or `pulumi version` failure
	// Broken is set when the CLI was found but `pulumi version` failed or
	// printed no version: Err says why.
	Broken bool
	// Kinds are the kinds in scope that need the CLI (Preflight sets them);
	// empty names every kind of this engine.
	Kinds []string
}

func (e *CLIMissingError) Error() string {
	what := fmt.Sprintf("the Pulumi CLI (%s) was not found", e.Command)
	switch {
	case e.Broken:
		what = fmt.Sprintf("the Pulumi CLI at %s does not work (%v)", e.Command, e.Err)
	case e.Version != "":
		what = fmt.Sprintf("the Pulumi CLI %s at %s is older than v%s", e.Version, e.Command, MinCLIVersion)
	}
	kinds := e.Kinds
	if len(kinds) == 0 {
		kinds = Kinds()
	}
	return fmt.Sprintf("%s: the Pulumi CLI is required for kinds %s: install it from %s or run with --install-pulumi, or set pulumi.command in deployer.yaml",
		what, strings.Join(kinds, ", "), InstallURL)
}

func (e *CLIMissingError) Unwrap() error { return e.Err }

// FindCLI locates the Pulumi CLI: command (pulumi.command of deployer.yaml)
// when set, else "pulumi" on PATH; runs `pulumi version` and checks it is at
// least MinCLIVersion. It returns the absolute path and the version
// ("v3.263.0"), or *CLIMissingError. A version read before from the same
// binary (same path, modification time and size) is taken from deployer's
// cache instead of running `pulumi version` again (clicache.go).
func FindCLI(command string) (path, version string, err error) {
	name := command
	if name == "" {
		name = "pulumi"
	}
	path, err = exec.LookPath(name)
	if err != nil {
		return "", "", &CLIMissingError{Command: name, Err: err}
	}
	if abs, aerr := filepath.Abs(path); aerr == nil {
		path = abs
	}
	if facts := loadFacts(path); facts != nil {
		if v, err := semver.ParseTolerant(facts.Version); err == nil && !v.LT(MinCLIVersion) {
			return path, facts.Version, nil
		}
	}
	out, err := runQuiet(context.Background(), path, "version")
	if err != nil {
		return "", "", &CLIMissingError{Command: path, Err: err, Broken: true}
	}
	version = strings.TrimSpace(string(out))
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return "", "", &CLIMissingError{Command: path, Err: fmt.Errorf("parse %q printed by %s version: %w", version, path, err), Broken: true}
	}
	if v.LT(MinCLIVersion) {
		return "", "", &CLIMissingError{Command: path, Version: version}
	}
	saveFacts(path, cliFacts{Version: version})
	return path, version, nil
}

// InstallCLI installs the Pulumi CLI matching the SDK (v3.263.0) under
// ~/.pulumi/versions with auto.InstallPulumiCommand (needs network access to
// get.pulumi.com) and returns its path, for --install-pulumi.
func InstallCLI(ctx context.Context) (string, error) {
	if _, err := auto.InstallPulumiCommand(ctx, nil); err != nil {
		return "", fmt.Errorf("install the Pulumi CLI (needs access to get.pulumi.com; else install it from %s): %w", InstallURL, err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the installed Pulumi CLI: %w", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(home, ".pulumi", "versions", "*", "bin", "pulumi"))
	if len(dirs) == 0 {
		return "", errors.New("the Pulumi CLI was installed but not found under ~/.pulumi/versions")
	}
	return dirs[len(dirs)-1], nil
}

// cliCommand is the engine's auto.PulumiCommand. Unlike auto's own, it runs
// pulumi under deployer's supervisor (proc.Cmd): in its own process group,
// so a terminal Ctrl-C reaches deployer only (pulumi would take a second
// SIGINT from deployer as "stop now"), dying with deployer even on kill -9.
// Cancelling ctx sends SIGINT once to pulumi (its graceful cancel), and kill
// stops at once.
//
// The commands that read and repair Pulumi's state once an operation
// stopped (cancel, export, import: their ctx comes from forCleanup) are left
// alone by kill: they are what tells deployer which resources exist, so a
// second Ctrl-C must not lose them. Their context's deadline bounds them
// instead (SIGTERM, then SIGKILL after cleanupGrace).
type cliCommand struct {
	path    string
	version semver.Version

	mu     sync.Mutex
	procs  map[*proc.Cmd]struct{}
	killed bool
}

// cleanupKey marks the context of a command run by forCleanup.
type cleanupKey struct{}

// forCleanup returns ctx marked so that the commands run with it survive
// kill (see cliCommand); ctx must carry a deadline.
func forCleanup(ctx context.Context) context.Context {
	return context.WithValue(ctx, cleanupKey{}, true)
}

// cleanupGrace is the time between SIGTERM and SIGKILL to a cleanup command
// whose context ended.
const cleanupGrace = 2 * time.Second

var _ auto.PulumiCommand = (*cliCommand)(nil)

func newCLICommand(path, version string) (*cliCommand, error) {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return nil, fmt.Errorf("parse Pulumi CLI version %q: %w", version, err)
	}
	return &cliCommand{path: path, version: v, procs: map[*proc.Cmd]struct{}{}}, nil
}

func (c *cliCommand) Version() semver.Version { return c.version }

// Run implements auto.PulumiCommand.
func (c *cliCommand) Run(ctx context.Context, workdir string, stdin io.Reader, additionalOutput, additionalErrorOutput []io.Writer,
	additionalEnv []string, args ...string,
) (string, string, int, error) {
	if out, ok := knownAnswer(ctx, args); ok {
		return out, "", 0, nil
	}
	if !slices.Contains(args, "--non-interactive") {
		args = append([]string{"--non-interactive"}, args...)
	}
	cleanup := ctx.Value(cleanupKey{}) != nil
	cmd := proc.Command(ctx, c.path, args...)
	if cleanup {
		cmd.Grace, cmd.WaitDelay = cleanupGrace, 2*cleanupGrace
	} else {
		cmd.Interrupt = os.Interrupt // graceful cancel; kill() stops at once
	}
	cmd.Dir = workdir
	cmd.Stdin = stdin
	// The CLI and its plugins start from the rule of what children get
	// (docs/secrets.md#what-children-get): Pulumi's passphrase, no
	// deployer key material, no CI token.
	cmd.Env = append(append(proc.Environ(proc.PulumiCLI, os.Environ()), additionalEnv...), "PULUMI_AUTOMATION_API=true", "PULUMI_SKIP_UPDATE_CHECK=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = io.MultiWriter(append(additionalOutput, &stdout)...)
	cmd.Stderr = io.MultiWriter(append(additionalErrorOutput, &stderr)...)
	if !cleanup {
		// Under the lock, so kill either sees this command or stops it
		// from starting.
		c.mu.Lock()
		if c.killed {
			c.mu.Unlock()
			return "", "", -2, fmt.Errorf("start %s: %w", c.path, errKilled)
		}
		if err := cmd.Start(); err != nil {
			c.mu.Unlock()
			return "", "", -2, fmt.Errorf("start %s: %w", c.path, err)
		}
		c.procs[cmd] = struct{}{}
		c.mu.Unlock()
	} else if err := cmd.Start(); err != nil {
		return "", "", -2, fmt.Errorf("start %s: %w", c.path, err)
	}
	exit, err := cmd.WaitExit()
	c.mu.Lock()
	delete(c.procs, cmd)
	c.mu.Unlock()
	// As auto's own PulumiCommand: the exit status (-1 after a signal)
	// and, unless pulumi exited 0, an error: the exit's, or the error of
	// waiting for pulumi with code -2.
	code := exit.Status()
	if err != nil {
		code = -2
	} else {
		err = exit.Err()
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return stdout.String(), stderr.String(), code, err
}

// answersKey marks the context of an engine operation (withAnswers): the
// questions the Automation API asks around it that deployer already has
// the answer to are answered by cliCommand without running the CLI.
type answersKey struct{}

type answers struct {
	// stackExists: the stack is known to exist in its backend, so
	// `pulumi stack select` (which the Automation API runs to open a
	// stack and which only checks that) succeeds.
	stackExists bool
}

// withAnswers returns ctx marked for knownAnswer. An `up`, `destroy` or
// `refresh` of the Automation API ends by asking the CLI for the stack's
// outputs (`stack output --json`, twice: with and without
// --show-secrets) and its last update (`stack history`), about 0.4 s a
// run; the engine reads none of that: it reads outputs, resources and
// pending operations from the one `stack export` it runs after the
// operation (docs/pulumi.md#what-deployer-asks-pulumi). Those questions get
// empty answers; every other command runs.
func withAnswers(ctx context.Context, a answers) context.Context {
	return context.WithValue(ctx, answersKey{}, a)
}

// knownAnswer returns the stdout of args when ctx carries withAnswers and
// args is one of the questions it answers.
func knownAnswer(ctx context.Context, args []string) (string, bool) {
	a, ok := ctx.Value(answersKey{}).(answers)
	if !ok {
		return "", false
	}
	var words []string
	for _, w := range args {
		if !strings.HasPrefix(w, "-") {
			words = append(words, w)
		}
		if len(words) == 2 {
			break
		}
	}
	switch strings.Join(words, " ") {
	case "stack output":
		return "{}", true
	case "stack history":
		return "[]", true
	case "stack select":
		return "", a.stackExists
	}
	return "", false
}

// errKilled is the error of an operation command started after kill.
var errKilled = errors.New("the Pulumi engine was stopped (second Ctrl-C)")

// kill sends SIGKILL to every running pulumi operation and everything it
// started, provider plugins included (they run in process groups of their
// own and would outlive pulumi), and refuses to start another operation.
// Cleanup commands run on (see cliCommand).
func (c *cliCommand) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed = true
	for cmd := range c.procs {
		_ = cmd.Kill()
	}
}

// maxQuietOutput bounds what runQuiet reads of a query's stdout and keeps
// of its stderr: `pulumi plugin ls --json` of a hundred plugins is a few
// KiB.
const maxQuietOutput = 16 << 20

// runQuiet runs a short query of the Pulumi CLI (`pulumi version`, `pulumi
// plugin ls --json`) under the supervisor (proc.Cmd: its own process group,
// stopped with ctx, dying with deployer) and returns its stdout, at most
// maxQuietOutput bytes. Errors: "run CLI ARGS: ...: STDERR" when it cannot
// start or exits non-zero; a CLI that prints more than maxQuietOutput (not
// the Pulumi CLI) is stopped and named.
func runQuiet(ctx context.Context, cli string, args ...string) ([]byte, error) {
	c := proc.Command(ctx, cli, args...)
	c.Env = append(proc.Environ(proc.PulumiCLI, os.Environ()), "PULUMI_SKIP_UPDATE_CHECK=true")
	stderr := &proc.Capped{Max: maxQuietOutput}
	c.Stderr = stderr
	out, over, err := c.OutputAtMost(maxQuietOutput)
	if over {
		return nil, fmt.Errorf("run %s %s: it printed more than %s: check that pulumi.command names the Pulumi CLI", cli, strings.Join(args, " "), inputfile.Size(maxQuietOutput))
	}
	if err != nil {
		return nil, fmt.Errorf("run %s %s: %w: %s", cli, strings.Join(args, " "), err, strings.TrimSpace(string(stderr.Bytes())))
	}
	return out, nil
}
