// Package engine is the contract between the deploy use case and the engines
// that change infrastructure: the local Command engine (SPEC 8) and Pulumi
// (internal/pulumiadapter).
package engine

import (
	"context"
	"io"
	"time"

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
}

// Result is the outcome of one step.
type Result struct {
	Address     string
	Action      plan.Action
	Status      string // ready | failed | deleted | cancelled
	Outputs     map[string]any
	ActualState map[string]any
	Pulumi      *statestore.PulumiInfo
	Err         error
	Started     time.Time
	Finished    time.Time
}

// Engine applies steps of the kinds it handles.
type Engine interface {
	// Name is "command" or "pulumi".
	Name() string
	// Handles reports whether the engine applies components of kind.
	Handles(kind string) bool
	// Apply runs create/update/replace/delete steps in the given (topological)
	// order, stopping at the first failure. It returns a Result for every step
	// it started, even on error; err is the first failure or ctx's error.
	Apply(ctx context.Context, steps []plan.Step, in Inputs) ([]Result, error)
	// Destroy deletes the components of steps (all Delete), in the given order.
	Destroy(ctx context.Context, steps []plan.Step, in Inputs) ([]Result, error)
}
