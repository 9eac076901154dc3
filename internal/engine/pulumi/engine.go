package pulumi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Options configure the Pulumi engine.
type Options struct {
	// BackendURL is the base URL of the state backend: "file:///abs/.deployer"
	// or "s3://bucket/prefix?region=..." (query kept). The Pulumi backend of
	// stack/env is BackendFor(BackendURL, stack, env).
	BackendURL string
	// SecretsProvider is pulumi.secrets_provider: "passphrase" (default; the
	// passphrase comes from PULUMI_CONFIG_PASSPHRASE or
	// PULUMI_CONFIG_PASSPHRASE_FILE) or "awskms://...".
	SecretsProvider string
	// Command is the Pulumi CLI path from FindCLI (or pulumi.command); ""
	// looks it up on PATH at first use.
	Command string
	// InstallPulumi installs the CLI with auto.InstallPulumiCommand when it is
	// missing (--install-pulumi).
	InstallPulumi bool
}

// Engine applies Pulumi kinds with the Automation API (engine.Engine).
type Engine struct {
	opts Options

	mu     sync.Mutex
	cmd    *cliCommand
	killed bool
}

var _ engine.Engine = (*Engine)(nil)

// New returns the Pulumi engine. It does not look for the CLI: that happens
// at the first operation (or call FindCLI first, before taking locks).
func New(opts Options) *Engine {
	if opts.SecretsProvider == "" {
		opts.SecretsProvider = "passphrase"
	}
	return &Engine{opts: opts}
}

// Name is "pulumi".
func (e *Engine) Name() string { return "pulumi" }

// Handles reports whether kind is a Pulumi kind.
func (e *Engine) Handles(kind string) bool { return IsPulumiKind(kind) }

// Capabilities: Pulumi batches. One `pulumi up` at a time applies every
// step that can go, ordering and parallelising them itself; the program
// declares the kept components too (docs/pulumi.md).
func (e *Engine) Capabilities() engine.Capabilities { return engine.Capabilities{} }

// Kill stops every running pulumi process at once (SIGKILL to its process
// group). Call it on the second SIGINT/SIGTERM: the first one cancels the
// context given to Apply/Destroy, which asks pulumi to stop gracefully.
// Pulumi may then leave pending operations that `pulumi refresh` clears.
func (e *Engine) Kill() {
	e.mu.Lock()
	c := e.cmd
	e.killed = true
	e.mu.Unlock()
	if c != nil {
		c.kill()
	}
}

// wasKilled reports whether Kill was called.
func (e *Engine) wasKilled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.killed
}

// BackendFor returns the Pulumi backend URL of stack/env under the state
// backend base: {base}/stacks/{stack}/{env}/pulumi, keeping base's query
// (docs/design.md#state-layout).
func BackendFor(base, stack, env string) string {
	u, q, _ := strings.Cut(base, "?")
	u = strings.TrimRight(u, "/") + "/stacks/" + stack + "/" + env + "/pulumi"
	if q != "" {
		u += "?" + q
	}
	return u
}

func (e *Engine) command(ctx context.Context) (*cliCommand, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd != nil {
		return e.cmd, nil
	}
	path, version, err := FindCLI(e.opts.Command)
	var missing *CLIMissingError
	if errors.As(err, &missing) && e.opts.InstallPulumi {
		installed, ierr := InstallCLI(ctx)
		if ierr != nil {
			return nil, ierr
		}
		path, version, err = FindCLI(installed)
	}
	if err != nil {
		return nil, err
	}
	c, err := newCLICommand(path, version)
	if err != nil {
		return nil, err
	}
	e.cmd = c
	return c, nil
}

// stack opens (creating if needed) the Pulumi stack {env} of project {stack}
// with the inline program of comps (recording finished components in done,
// when not nil), and sets the environment's config.
func (e *Engine) stack(ctx context.Context, in engine.Inputs, comps []Component, done *finished) (auto.Stack, error) {
	if e.opts.BackendURL == "" {
		return auto.Stack{}, errors.New("pulumi engine: no state backend URL to place the Pulumi backend under")
	}
	cmd, err := e.command(ctx)
	if err != nil {
		return auto.Stack{}, err
	}
	backend := BackendFor(e.opts.BackendURL, in.Stack, in.Env)
	if err := ensureLocalBackend(backend); err != nil {
		return auto.Stack{}, err
	}
	// The Automation API opens a stack with `pulumi stack select`, which
	// only checks that it exists: a file:// backend tells that without the
	// CLI (a new stack is then created with `pulumi stack init`, as before).
	ctx = withAnswers(ctx, answers{stackExists: localStackExists(backend, in.Stack, in.Env)})
	env := map[string]string{}
	for _, k := range []string{"PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if strings.HasPrefix(e.opts.SecretsProvider, "passphrase") && env["PULUMI_CONFIG_PASSPHRASE"] == "" && env["PULUMI_CONFIG_PASSPHRASE_FILE"] == "" {
		return auto.Stack{}, errors.New("pulumi.secrets_provider is passphrase but PULUMI_CONFIG_PASSPHRASE is not set: export it (the same value on every run), or use an awskms:// secrets provider")
	}
	project := workspace.Project{
		Name:    tokens.PackageName(in.Stack),
		Runtime: workspace.NewProjectRuntimeInfo("go", nil),
		Backend: &workspace.ProjectBackend{URL: backend},
	}
	st, err := auto.UpsertStackInlineSource(ctx, in.Env, in.Stack, Program(comps, in.Outputs, done),
		auto.Project(project), auto.SecretsProvider(e.opts.SecretsProvider), auto.EnvVars(env), auto.Pulumi(cmd))
	if err != nil {
		return auto.Stack{}, fmt.Errorf("open Pulumi stack %s/%s at %s: %w", in.Stack, in.Env, backend, shorten(err))
	}
	cfg := auto.ConfigMap{}
	for k, v := range in.EnvConfig {
		cfg[k] = auto.ConfigValue{Value: configString(v)}
	}
	if len(cfg) > 0 {
		if err := st.SetAllConfig(ctx, cfg); err != nil {
			return auto.Stack{}, fmt.Errorf("set stack config of %s/%s: %w", in.Stack, in.Env, shorten(err))
		}
	}
	return st, nil
}

// Apply runs one `pulumi up` whose program declares req.Keep plus the
// non-delete steps of req.Steps; components absent from it are deleted by
// Pulumi (apply). It returns one Result per step. On cancellation (ctx
// done) the results of unfinished steps are "cancelled" and carry what
// Pulumi recorded.
func (e *Engine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	steps, in := req.Steps, req.Inputs
	started := time.Now()
	ctx = withAnswers(ctx, answers{})
	comps := Components(in.Keep, steps)
	if err := e.importGuard(ctx, in, comps, steps); err != nil {
		return engine.ApplyResponse{Results: failAll(steps, started, err)}, err
	}
	done := newFinished()
	st, err := e.stack(ctx, in, comps, done)
	if err != nil {
		return engine.ApplyResponse{Results: failAll(steps, started, err)}, err
	}
	if err := e.unprotectIfNeeded(ctx, st, in, steps); err != nil {
		return engine.ApplyResponse{Results: failAll(steps, started, err)}, err
	}
	progress, flush := pulumiProgress(in.Progress)
	defer flush()
	ev := watchEvents()
	_, upErr := st.Up(ctx, optup.ProgressStreams(progress), optup.ErrorProgressStreams(progress),
		optup.EventStreams(ev.ch), optup.Message("deployer "+in.DeploymentID))
	verb := "deploy"
	if len(steps) > 0 && allDeletes(steps) {
		verb = "destroy"
	}
	rs, err := e.collect(ctx, st, steps, in, started, upErr, ev.wait(), done, verb)
	return engine.ApplyResponse{Results: rs}, err
}

// Destroy deletes the components of req.Steps (destroy): `pulumi destroy`
// when nothing else of the stack stays (req.Keep has no Pulumi component),
// else an `up` whose program declares only req.Keep.
func (e *Engine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	steps, in := req.Steps, req.Inputs
	if len(Components(in.Keep, nil)) > 0 {
		res, err := e.Apply(ctx, engine.ApplyRequest(req))
		return engine.DestroyResponse(res), err
	}
	ctx = withAnswers(ctx, answers{})
	started := time.Now()
	st, err := e.stack(ctx, in, nil, nil)
	if err != nil {
		return engine.DestroyResponse{Results: failAll(steps, started, err)}, err
	}
	progress, flush := pulumiProgress(in.Progress)
	defer flush()
	_, derr := st.Destroy(ctx, optdestroy.ProgressStreams(progress), optdestroy.ErrorProgressStreams(progress),
		optdestroy.Message("deployer "+in.DeploymentID))
	rs, err := e.collect(ctx, st, steps, in, started, derr, upEvents{}, nil, "destroy")
	return engine.DestroyResponse{Results: rs}, err
}

// Preview runs `pulumi preview` of the program Apply would run (preview)
// and returns, under the heading "Pulumi preview:", Pulumi's
// resource-level preview text followed by its change summary ("create 3,
// same 2"), for `plan --preview`.
func (e *Engine) Preview(ctx context.Context, req engine.PreviewRequest) (engine.PreviewResponse, error) {
	in := req.Inputs
	ctx = withAnswers(ctx, answers{})
	res, err := e.preview(ctx, in, Components(in.Keep, req.Steps))
	if err != nil {
		return engine.PreviewResponse{}, err
	}
	var sum []string
	for op, n := range res.ChangeSummary {
		sum = append(sum, fmt.Sprintf("%s %d", op, n))
	}
	sort.Strings(sum)
	return engine.PreviewResponse{Text: "Pulumi preview:\n" + strings.TrimRight(res.StdOut, "\n") + "\n\nPulumi changes: " + strings.Join(sum, ", ") + "\n"}, nil
}

// preview runs `pulumi preview` of the program of comps on the stack of
// in (preview): what Preview shows and what importGuard reads.
func (e *Engine) preview(ctx context.Context, in engine.Inputs, comps []Component, opts ...optpreview.Option) (auto.PreviewResult, error) {
	st, err := e.stack(ctx, in, comps, nil)
	if err != nil {
		return auto.PreviewResult{}, err
	}
	res, err := st.Preview(ctx, opts...)
	if err != nil {
		return res, fmt.Errorf("pulumi preview of %s/%s: %w", in.Stack, in.Env, shorten(err))
	}
	return res, nil
}

// Refresh runs `pulumi refresh` (refresh; it updates Pulumi's own state in
// the backend, not deployer's) and returns, per component of req.Steps and
// req.Keep, the actual_state fields that differ between deployer's state
// (Prior) and the cloud. Components without drift are left out.
func (e *Engine) Refresh(ctx context.Context, req engine.RefreshRequest) (engine.RefreshResponse, error) {
	in := req.Inputs
	ctx = withAnswers(ctx, answers{})
	st, err := e.stack(ctx, in, Components(in.Keep, req.Steps), nil)
	if err != nil {
		return engine.RefreshResponse{}, err
	}
	progress, flush := pulumiProgress(in.Progress)
	defer flush()
	if _, err := st.Refresh(ctx, optrefresh.ProgressStreams(progress)); err != nil {
		return engine.RefreshResponse{}, fmt.Errorf("pulumi refresh of %s/%s: %w", in.Stack, in.Env, shorten(err))
	}
	dep, err := st.Export(ctx)
	if err != nil {
		return engine.RefreshResponse{}, fmt.Errorf("export Pulumi stack %s/%s after refresh: %w", in.Stack, in.Env, shorten(err))
	}
	snap, err := parseDeployment(dep.Deployment)
	if err != nil {
		return engine.RefreshResponse{}, err
	}
	steps := append(append([]plan.Step(nil), in.Keep...), req.Steps...)
	return engine.RefreshResponse{Drift: drift(snap, steps), Read: withState(steps)}, nil
}

// pulumiPrefix starts every line of Pulumi's streamed output, as the
// component address starts a Command component's (docs/pulumi.md).
const pulumiPrefix = "[pulumi] "

// pulumiProgress returns the writer of Pulumi's streamed output: each line
// prefixed, split at \n and \r (engine.PrefixLines), and its flush.
func pulumiProgress(w io.Writer) (io.Writer, func()) {
	return engine.PrefixLines(progressWriter(w), pulumiPrefix)
}

// allDeletes reports whether every step is a Delete (a partial destroy).
func allDeletes(steps []plan.Step) bool {
	for _, s := range steps {
		if s.Action != plan.Delete {
			return false
		}
	}
	return true
}

func progressWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func failAll(steps []plan.Step, started time.Time, err error) []engine.Result {
	now := time.Now()
	out := make([]engine.Result, 0, len(steps))
	for _, s := range steps {
		out = append(out, engine.Result{Address: s.Address, Action: s.Action, Status: engine.StatusFailed, Err: err, Started: started, Finished: now})
	}
	return out
}

// withState are the addresses of the steps that have state (Prior), each
// once: the components a refresh reads.
func withState(steps []plan.Step) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range steps {
		if s.Prior != nil && !seen[s.Address] {
			seen[s.Address] = true
			out = append(out, s.Address)
		}
	}
	return out
}
