// Package engine is the contract between the deploy use case and the engines
// that change infrastructure: the local Command engine (internal/engine/command)
// and Pulumi (internal/engine/pulumi); docs/pulumi.md, "Engines". Only the
// wiring (internal/cli's engine factory) builds concrete engines: deploy and
// the commands use this interface alone.
package engine

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Inputs is what every engine call needs besides its steps.
type Inputs struct {
	Stack, Env   string
	Dir          string         // directory of deployer.yaml; Command runs here
	EnvConfig    map[string]any // environments.{env}.config
	DeploymentID string
	// Outputs holds the outputs of every component already applied, by address:
	// from state and from earlier steps of the run. Each call gets its own
	// copy (calls run concurrently); an engine may update it as its steps
	// complete, and deploy merges the results (docs/plan.md "Parallel apply").
	Outputs map[string]map[string]any
	// Keep lists the components of this engine that are unchanged in this run
	// (no-op steps and ones outside --service/--component scope) and must stay
	// as they are: Pulumi's program must still declare them.
	Keep []plan.Step
	// Progress receives human progress lines (stderr).
	Progress io.Writer
	// StackOutputs reads, from deployer's state, the outputs of every
	// component of another stack/environment by address and the stack's
	// own outputs, as a StackReference component reads them (docs/pulumi.md,
	// "Stack references"). Secret outputs keep their {secret: true, value: X} marker.
	StackOutputs func(ctx context.Context, stack, env string) (StackView, error)
	// Learn, when set, is called with a component's outputs the moment the
	// engine has read them, before any step that depends on them starts:
	// deploy registers their secret values with its masker, so no later
	// line printed or stored shows them (docs/secrets.md#masked-everywhere).
	Learn func(address string, outputs map[string]any)
}

// StackView is what one stack/environment's state shows another stack
// (Inputs.StackOutputs).
type StackView struct {
	// Components are the outputs of every component, by address.
	Components map[string]map[string]any
	// Outputs are the stack's own outputs, by name: the state's top-level
	// outputs (docs/operations.md#stack-outputs); empty when it names none.
	Outputs map[string]any
}

// Status is how one step ended (Result.Status).
type Status string

// The step statuses. A step succeeded when it is StatusReady or
// StatusDeleted (Status.Succeeded); every other status is a failure.
const (
	StatusReady     Status = "ready"     // created, updated or replaced: the component is as configured
	StatusDeleted   Status = "deleted"   // the component is gone
	StatusFailed    Status = "failed"    // the engine tried and failed (Result.Err says why)
	StatusCancelled Status = "cancelled" // stopped by Ctrl-C, SIGTERM or a lost lock before it finished
	// StatusPending: its operation was in flight when the engine's process
	// was killed (the second Ctrl-C); the engine's error names it and what
	// resolves it.
	StatusPending Status = "pending"
)

// Succeeded reports whether the step did what the plan asked.
func (s Status) Succeeded() bool { return s == StatusReady || s == StatusDeleted }

// Result is the outcome of one step.
type Result struct {
	Address     string
	Action      plan.Action
	Status      Status
	Outputs     map[string]any
	ActualState map[string]any
	// EngineData is the engine's private record of the component, kept in
	// its state entry as it is (statestore.EngineData); nil when it keeps
	// none.
	EngineData statestore.EngineData
	Err        error
	// Gone: the apply found the component no longer exists (a Command
	// component's read printed null right after it, docs/command-kind.md#drift-read);
	// the step failed and the state drops its entry, so the next plan
	// creates it.
	Gone     bool
	Started  time.Time
	Finished time.Time
}

// ErrNotSupported is returned by an engine's Preview or Refresh when it has
// no such operation (the Command engine).
var ErrNotSupported = errors.New("not supported by this engine")

// Kind is one component kind of an engine's catalog (docs/kinds.md).
type Kind struct {
	// Name is the kind as written in deployer.yaml ("RDS").
	Name string
	// ReplaceOn lists the dotted config paths whose change forces
	// replacement (plan.Options.ReplaceOn).
	ReplaceOn []string
	// Read, when set, makes the kind a data source (StackReference): a
	// component's outputs are what Read returns for its config (c has
	// Address, Kind and Config), read without a lock and changing nothing.
	// Plans read them (plan.Options.Read) and diff them against the outputs
	// the state recorded; an apply records exactly the values its plan
	// read, which the engine's Apply finds in Inputs.Outputs (docs/plan.md
	// "References to other stacks"). Errors name the component and what to
	// do.
	Read func(ctx context.Context, c plan.Step, in Inputs) (map[string]any, error)
	// Sections are the component keys of deployer.yaml, beyond kind,
	// depends_on, config, environments and secrets, that the kind takes
	// ("command"); config refuses them on other kinds (config.Kind).
	Sections []string
	// Requires are the component paths the kind cannot do without
	// ("command.create"), each with what it is for.
	Requires []config.Requirement
	// Decode decodes and checks one of the kind's sections as written
	// (config.Kind.Decode); nil keeps sections as written.
	Decode func(s *config.Section) map[string]any
	// Import says whether the kind's components can adopt an existing
	// instance by its id (import:, deployer import) and what that needs
	// (docs/operations.md#import); the zero value: they cannot.
	Import config.ImportRule
	// Settings says how a plan treats those settings: how the engine
	// recorded them in state (its older forms included) and what a delete
	// runs (plan.Options.Settings).
	Settings plan.KindSettings
	// RereadOn lists the dotted setting paths ("command.read") whose change
	// makes a plan read the component again with its new settings
	// (Refresh) and show under the step what differs from actual_state
	// (plan.Step.Drift); the apply records what the plan read
	// (plan.Step.Reread), so drift is never accepted unseen
	// (docs/operations.md#refresh-only).
	RereadOn []string
	// Preview and Refresh say which of the kind's components the engine's
	// Preview (plan --preview) and Refresh (plan --refresh) cover. When
	// nothing in scope is covered, deploy's error names the kinds that are,
	// from these (docs/plan.md#drift). The zero value: none.
	Preview, Refresh Coverage
}

// Coverage says which components of a kind an optional engine operation
// (Engine.Preview, Engine.Refresh) covers.
type Coverage struct {
	// Covered: the operation covers the kind's components (those When
	// names).
	Covered bool
	// When, if set, narrows Covered to some components, for users: which,
	// and where that is documented ("with command.read
	// (docs/command-kind.md#drift-read)").
	When string
}

// Drift is one component whose actual_state in deployer's state differs
// from what a refresh found in the cloud (plan --refresh).
type Drift struct {
	Address string `json:"address"`
	// Missing is true when the component's resources no longer exist.
	Missing bool `json:"missing,omitempty"`
	// Fields are the differing actual_state keys: Old from state, New from the cloud.
	Fields []plan.FieldDiff `json:"fields,omitempty"`
	// ActualState is the refreshed actual_state, to record if wanted.
	ActualState map[string]any `json:"actual_state,omitempty"`
}

// Capabilities tell the deploy scheduler what it may do with an engine's
// steps (docs/plan.md "Parallel apply"). The zero value is a batch engine.
type Capabilities struct {
	// ConcurrentSteps: every step is independent of the others' calls (the
	// Command engine runs one process per step), so independent steps go
	// to Apply and Destroy as separate concurrent calls of one step each.
	// When false the engine batches: one call at a time gets every step of
	// the engine that can go (it orders and parallelises them itself, as
	// one `pulumi up` does) with Inputs.Keep, the components it must leave
	// as they are.
	ConcurrentSteps bool
}

// Engine applies steps of the kinds it handles.
type Engine interface {
	// Name is "command" or "pulumi".
	Name() string
	// Kinds is the engine's kind catalog; the engines' catalogs together
	// are every kind deployer knows.
	Kinds() []Kind
	// Handles reports whether the engine applies components of kind.
	Handles(kind string) bool
	// Capabilities says how the scheduler may call Apply and Destroy.
	Capabilities() Capabilities
	// Preflight checks, before any lock is taken or backend opened, what
	// applying req.Components needs: for Pulumi the CLI, the provider
	// plugins and the secrets passphrase. The error says what to install
	// or set.
	Preflight(ctx context.Context, req PreflightRequest) error
	// Preview returns the engine's own preview of applying req.Steps (plan
	// --preview), as lines headed by one naming the engine ("Pulumi
	// preview:"), or ErrNotSupported when it covers none of them
	// (Kind.Preview).
	Preview(ctx context.Context, req PreviewRequest) (PreviewResponse, error)
	// Refresh compares the actual_state of req.Steps (with Prior) and
	// req.Keep with the cloud (plan --refresh) and returns the components
	// that drifted, or ErrNotSupported when it covers none of them
	// (Kind.Refresh).
	Refresh(ctx context.Context, req RefreshRequest) (RefreshResponse, error)
	// Kill stops the engine's running processes at once (the second
	// Ctrl-C); the running Apply or Destroy then returns promptly with what
	// it knows, having cleaned up after itself.
	Kill()
	// Apply runs create/update/replace/delete steps in the given (topological)
	// order, stopping at the first failure. A no-op step with MovedFrom
	// only moves its component to a new address: the engine moves what it
	// keeps under the old one (Pulumi: an alias) and reports it ready,
	// running nothing else (Moved, for engines that keep nothing). It returns a Result for every step
	// it started, even on error; err is the first failure or ctx's error.
	Apply(ctx context.Context, req ApplyRequest) (ApplyResponse, error)
	// Destroy deletes the components of req.Steps (all Delete), in the
	// given order; it returns as Apply does.
	Destroy(ctx context.Context, req DestroyRequest) (DestroyResponse, error)
}

// Each call of an Engine takes a request and returns a response (as
// Terraform's providers do), so the contract grows by new fields without
// breaking the engines or their callers.

// PreflightRequest is one Engine.Preflight.
type PreflightRequest struct {
	// Components are the components of the engine's kinds in scope: steps
	// with Address, Kind and Config.
	Components []plan.Step
}

// PreviewRequest is one Engine.Preview: the steps to preview and what
// every call needs besides them.
type PreviewRequest struct {
	Steps []plan.Step
	Inputs
}

// PreviewResponse is the engine's preview, as lines.
type PreviewResponse struct {
	Text string
}

// RefreshRequest is one Engine.Refresh: the steps whose actual_state is
// compared with the cloud (with Prior), and Inputs.Keep besides.
type RefreshRequest struct {
	Steps []plan.Step
	Inputs
}

// RefreshResponse lists the components that drifted.
type RefreshResponse struct {
	Drift []Drift
	// Read are the addresses of the components the engine read, drifted
	// or not: deploy --refresh-only lists the others in scope as skipped
	// (docs/operations.md#refresh-only).
	Read []string
}

// ApplyRequest is one Engine.Apply: the steps in the order to run them,
// and what every call needs besides them.
type ApplyRequest struct {
	Steps []plan.Step
	Inputs
}

// ApplyResponse holds a Result for every step the engine started.
type ApplyResponse struct {
	Results []Result
}

// DestroyRequest is one Engine.Destroy: the steps whose components are
// deleted, in the order to delete them.
type DestroyRequest struct {
	Steps []plan.Step
	Inputs
}

// DestroyResponse holds a Result for every step the engine started.
type DestroyResponse struct {
	Results []Result
}
