package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/proc"
)

// Kind is the component kind this engine applies.
const Kind = "Command"

// DefaultTimeout bounds one command when the component sets no timeout (docs/command-kind.md#failure-timeout-and-cancellation).
const DefaultTimeout = 10 * time.Minute

// DefaultGrace is how long a command has to exit after SIGTERM before its
// process group gets SIGKILL.
const DefaultGrace = 5 * time.Second

// Engine runs Command components as local processes. The zero value is not
// usable; build one with New.
type Engine struct {
	grace   time.Duration
	timeout time.Duration
	environ func() []string
	now     func() time.Time

	mu     sync.Mutex
	killed bool                   // Kill was called: no command starts any more
	procs  map[*proc.Cmd]struct{} // the commands running now, for Kill
}

var _ engine.Engine = (*Engine)(nil)

// Option configures an Engine.
type Option func(*Engine)

// WithGrace sets the time between SIGTERM and SIGKILL on cancellation or
// timeout (default 5 s).
func WithGrace(d time.Duration) Option { return func(e *Engine) { e.grace = d } }

// WithDefaultTimeout sets the timeout of components without command.timeout
// (default 10 min).
func WithDefaultTimeout(d time.Duration) Option { return func(e *Engine) { e.timeout = d } }

// WithEnviron sets the base environment of every command (default
// os.Environ), of which a command gets what proc.Environ gives user
// commands (docs/secrets.md#what-children-get); the DEPLOYER_* variables of docs/command-kind.md#environment-variables are added to it.
func WithEnviron(f func() []string) Option { return func(e *Engine) { e.environ = f } }

// WithClock sets the clock used for Result.Started/Finished and durations.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// New returns the Command engine with the given options.
func New(opts ...Option) *Engine {
	e := &Engine{grace: DefaultGrace, timeout: DefaultTimeout, environ: os.Environ, now: time.Now,
		procs: map[*proc.Cmd]struct{}{}}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Name is "command".
func (e *Engine) Name() string { return "command" }

// Handles reports whether kind is "Command".
func (e *Engine) Handles(kind string) bool { return kind == Kind }

// Capabilities: independent Command steps may run in separate concurrent
// Apply/Destroy calls of one step each: every step is its own process
// (docs/plan.md "Parallel apply").
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ConcurrentSteps: true}
}

// Apply runs req.Steps in order, one command at a time (apply); see
// runSteps.
func (e *Engine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	rs, err := e.runSteps(ctx, req.Steps, req.Inputs)
	return engine.ApplyResponse{Results: rs}, err
}

// Destroy runs command.delete of every step of req.Steps in the given
// order, whatever the steps' actions (destroy); errors as Apply.
func (e *Engine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	del := make([]plan.Step, 0, len(req.Steps))
	for _, st := range req.Steps {
		st.Action = plan.Delete
		del = append(del, st)
	}
	rs, err := e.runSteps(ctx, del, req.Inputs)
	return engine.DestroyResponse{Results: rs}, err
}

// runSteps runs the steps in order (no-op steps are skipped): create runs
// command.create; update runs command.update or, when empty, command.create,
// and nothing when only command.delete or command.timeout changed
// (stateOnly);
// replace runs the delete the existing instance was applied with
// (Step.PriorSettings, nothing when it had none) then command.create;
// delete runs command.delete (nothing when empty). Outputs of each finished step are stored in
// in.Outputs so later steps see them; a deleted component's are removed.
//
// It stops at the first failure and returns the Results of the steps it
// started (status ready, deleted, failed or cancelled) with that failure: a
// *StepError for a non-zero exit, a timeout or bad outputs, an error
// wrapping context.Cause(ctx) when ctx was cancelled, or one wrapping
// ErrKilled after Kill (the step then is cancelled).
func (e *Engine) runSteps(ctx context.Context, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	if in.Outputs == nil {
		in.Outputs = map[string]map[string]any{}
	}
	var results []engine.Result
	for _, st := range steps {
		if st.Action == plan.NoOp {
			if st.MovedFrom != "" {
				results = append(results, engine.Moved(st, in.Outputs, progress(in), e.now()))
			}
			continue
		}
		if ctx.Err() != nil {
			return results, fmt.Errorf("not starting %s: %w", st.Address, context.Cause(ctx))
		}
		if e.wasKilled() {
			return results, fmt.Errorf("not starting %s: %w", st.Address, ErrKilled)
		}
		r, err := e.applyStep(ctx, st, in)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// applyStep runs one step and records its outputs in in.Outputs.
func (e *Engine) applyStep(ctx context.Context, st plan.Step, in engine.Inputs) (engine.Result, error) {
	spec := stepSpec(st)
	res := engine.Result{Address: st.Address, Action: st.Action, Started: e.now()}
	prev := previousOutputs(st, in)

	var (
		out *runOutcome
		err error
	)
	switch st.Action {
	case plan.Import:
		return e.importStep(ctx, st, in, res)
	case plan.Create:
		out, err = e.runAction(ctx, st, in, spec, "create", spec.Create, map[string]any{})
	case plan.Update:
		if stateOnly(st) {
			return e.recordOnly(ctx, st, in, res, prev)
		}
		cmd := spec.Update
		if cmd == "" {
			cmd = spec.Create
		}
		out, err = e.runAction(ctx, st, in, spec, "update", cmd, prev)
	case plan.Replace:
		// The existing instance goes with the delete it was applied with
		// (Step.PriorSettings), under its timeout; the new one comes from
		// the configured create.
		if old := SpecFrom(st.PriorSettings[Section]); old != nil && old.Delete != "" {
			out, err = e.runAction(ctx, st, in, old, "delete", old.Delete, prev)
		} else {
			fmt.Fprintf(progress(in), "[%s] replace: no delete command recorded for the existing instance: creating the new one only\n", st.Address)
		}
		if err == nil {
			out, err = e.runAction(ctx, st, in, spec, "create", spec.Create, map[string]any{})
		}
	case plan.Delete:
		if spec.Delete == "" {
			fmt.Fprintf(progress(in), "[%s] no delete command: removing the component from state only\n", st.Address)
			break
		}
		out, err = e.runAction(ctx, st, in, spec, "delete", spec.Delete, prev)
	default:
		err = fmt.Errorf("component %s: unknown action %q", st.Address, st.Action)
	}
	if out != nil {
		res.ActualState = out.actualState()
	}
	if err == nil && st.Action != plan.Delete && spec.Read != "" {
		err = e.recordLive(ctx, st, in, out.outputs, res.ActualState)
	}

	res.Finished = e.now()
	if err != nil {
		return failed(res, err), err
	}
	if st.Action == plan.Delete {
		res.Status = engine.StatusDeleted
		delete(in.Outputs, st.Address)
		return res, nil
	}
	if in.Learn != nil {
		in.Learn(st.Address, out.outputs)
	}
	res.Status = engine.StatusReady
	res.ActualState = recordCommands(res.ActualState, st)
	res.Outputs = out.outputs
	in.Outputs[st.Address] = maps.Clone(out.outputs)
	return res, nil
}

// recordOnly applies an update whose diffs are all stateOnly: only
// command.delete, command.timeout or command.read changed. They take effect
// at the next delete or run, so neither create nor update runs and the new
// commands are recorded; a changed read runs once and its JSON replaces
// actual_state.live (docs/decisions.md).
func (e *Engine) recordOnly(ctx context.Context, st plan.Step, in engine.Inputs, res engine.Result, prev map[string]any) (engine.Result, error) {
	res.Outputs = prev
	res.ActualState = map[string]any{}
	if st.Prior != nil && st.Prior.ActualState != nil {
		res.ActualState = maps.Clone(st.Prior.ActualState)
	}
	readChanged := slices.ContainsFunc(st.Diffs, func(f plan.FieldDiff) bool { return f.Path == Section+".read" })
	if readChanged && st.Reread != nil {
		// The plan read with the new command and showed what differs: that
		// is what is recorded (docs/operations.md#refresh-only).
		fmt.Fprintf(progress(in), "[%s] only commands changed: recording them and the live state the plan read\n", st.Address)
		res.ActualState = maps.Clone(st.Reread)
	} else if readChanged && stepSpec(st).Read != "" {
		fmt.Fprintf(progress(in), "[%s] only commands changed: recording them and the new read's live state\n", st.Address)
		if err := e.recordLive(ctx, st, in, prev, res.ActualState); err != nil {
			res.Finished = e.now()
			return failed(res, err), err
		}
	} else {
		if readChanged {
			delete(res.ActualState, LiveKey) // read removed: nothing live is recorded any more
		}
		fmt.Fprintf(progress(in), "[%s] only %s changed: recorded, nothing runs\n", st.Address, recordedWhat(st))
	}
	res.Finished, res.Status = e.now(), engine.StatusReady
	res.ActualState = recordCommands(res.ActualState, st)
	in.Outputs[st.Address] = maps.Clone(prev)
	return res, nil
}

// failed is res of a step that ended with err: failed, or cancelled
// when err is a cancellation; Gone when its read found the thing gone.
func failed(res engine.Result, err error) engine.Result {
	res.Status = engine.StatusFailed
	if errors.Is(err, errCancelled) {
		res.Status = engine.StatusCancelled
	}
	res.Err, res.Gone = err, errors.Is(err, ErrGone)
	return res
}

// recordedWhat names what a record-only update records.
func recordedWhat(st plan.Step) string {
	if st.LifecycleOnly() {
		return "protect"
	}
	return "command.delete, command.timeout or command.read"
}

// runAction runs cmd, one shell command of a step from spec, bounded by
// spec's timeout; action is the one the command sees in DEPLOYER_ACTION
// (create, update or delete).
func (e *Engine) runAction(ctx context.Context, st plan.Step, in engine.Inputs, spec *Spec, action, cmd string, prev map[string]any) (*runOutcome, error) {
	if cmd == "" {
		return nil, fmt.Errorf("component %s: no %s command: set services.%s.components.%s.command.%s in deployer.yaml",
			st.Address, action, st.Service, st.Component, action)
	}
	p := payload{
		Stack: in.Stack, Environment: in.Env, Component: st.Address, Action: action,
		DeploymentID: in.DeploymentID,
		Config:       unwrapMap(st.Config),
		EnvConfig:    unwrapMap(in.EnvConfig),
		Outputs:      unwrapMap(prev),
		Dependencies: dependencyOutputs(st, in),
	}
	timeout := e.timeout
	if t := spec.Timeout; t > 0 {
		timeout = t
	}
	return e.run(ctx, runSpec{
		address: st.Address, action: action, command: cmd, dir: in.Dir,
		payload: p, timeout: timeout, grace: spec.Grace, progress: progress(in),
	})
}

// previousOutputs are the outputs the component has now: from this run's
// Inputs.Outputs, else from state.
func previousOutputs(st plan.Step, in engine.Inputs) map[string]any {
	if o, ok := in.Outputs[st.Address]; ok && o != nil {
		return maps.Clone(o)
	}
	if st.Prior != nil && st.Prior.Outputs != nil {
		return maps.Clone(st.Prior.Outputs)
	}
	return map[string]any{}
}

// dependencyOutputs maps each depends_on address to its current outputs ({}
// when it has none), secret wrappers unwrapped as in config.
func dependencyOutputs(st plan.Step, in engine.Inputs) map[string]map[string]any {
	deps := make(map[string]map[string]any, len(st.DependsOn))
	for _, d := range st.DependsOn {
		o := in.Outputs[d]
		if o == nil {
			o = map[string]any{}
		}
		deps[d] = unwrapMap(o)
	}
	return deps
}

func progress(in engine.Inputs) io.Writer {
	if in.Progress == nil {
		return io.Discard
	}
	return in.Progress
}
