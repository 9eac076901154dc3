package stateops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/deploy/core"
)

// OutputsRequest asks for the stack outputs of a stack/environment
// (`deployer output`, docs/operations.md#stack-outputs).
type OutputsRequest struct {
	Target core.Target
	// Name, when set, asks for that output alone.
	Name string
	// ShowSecrets: the caller's Store opens secret values; the reveal is
	// audited as state.secrets_shown (ShowState).
	ShowSecrets bool
}

// OutputsResult is the stack's outputs as the state records them, secret
// values sealed (an envelope) or, with ShowSecrets, marked {secret: true,
// value: X}.
type OutputsResult struct {
	Target  core.Target
	Outputs map[string]any // every output, or only Name's
	Serial  int64
}

// ErrNoSuchOutput: the output asked for is not in the state.
var ErrNoSuchOutput = errors.New("no such output")

// Outputs reads the stack outputs of req.Target from its verified state,
// read-only and without a lock. Errors: ShowState's (no state: the deploy
// to run; *statestore.ChecksumError), and ErrNoSuchOutput, wrapped, naming
// the outputs that exist.
func Outputs(ctx context.Context, d StateDeps, req OutputsRequest) (*OutputsResult, error) {
	res, err := ShowState(ctx, d, ShowStateRequest{Target: req.Target, ShowSecrets: req.ShowSecrets})
	if err != nil {
		return nil, err
	}
	outs := res.State.Outputs
	if outs == nil {
		outs = map[string]any{}
	}
	if req.Name != "" {
		v, ok := outs[req.Name]
		if !ok {
			have := "it has none: name them under outputs: in deployer.yaml and deploy (docs/operations.md#stack-outputs)"
			if len(outs) > 0 {
				have = "it has " + strings.Join(slices.Sorted(maps.Keys(outs)), ", ")
			}
			return nil, fmt.Errorf("%w: %q is not an output of %s/%s (%s)", ErrNoSuchOutput, req.Name, req.Target.Stack, req.Target.Env, have)
		}
		outs = map[string]any{req.Name: v}
	}
	return &OutputsResult{Target: req.Target, Outputs: outs, Serial: res.State.Serial}, nil
}
