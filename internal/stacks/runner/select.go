package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// SelectRequest says which stacks a plan, deploy or destroy --all acts on
// (docs/many-stacks.md).
type SelectRequest struct {
	// Root is the directory searched for deployer.yaml files.
	Root string
	Env  string
	Op   StackOp
	// ChangedSince is --changed-since REF ("": every stack).
	ChangedSince string
	// Load loads one stack's deployer.yaml (with the DEPLOYER_* layer).
	Load func(path string) (*config.Config, error)
}

// Selection is the stacks a run acts on.
type Selection struct {
	Set *stacks.Set
	// Only names the stacks to run (StacksRequest.Only); nil runs every
	// stack that declares the environment.
	Only map[string]bool
	// Changed are the stacks a change since ChangedSince touches, sorted
	// (docs/many-stacks.md#--changed-since); Only adds every stack that reads
	// their outputs, directly or not.
	Changed []string
}

// SelectStacks finds the stacks under req.Root and selects those of
// --changed-since. Errors: the discovery's (an invalid deployer.yaml, a
// reference cycle), a *stacks.BackendsError, git's for --changed-since, and a *deploy.TargetError when no
// stack declares req.Env.
func SelectStacks(ctx context.Context, req SelectRequest) (*Selection, error) {
	set, err := stacks.Discover(req.Root, stacks.Options{Env: req.Env, Load: req.Load})
	if err != nil {
		return nil, err
	}
	if err := set.CheckBackends(); err != nil {
		return nil, err // refused before any plan: the readers could not find the producers' state
	}
	if !slices.ContainsFunc(set.Stacks, func(st *stacks.Stack) bool { return st.InEnv }) {
		return nil, &deploy.TargetError{Msg: fmt.Sprintf("no stack under %s declares environment %q: check -e (deployer stacks lists them)", set.Root, req.Env)}
	}
	sel := &Selection{Set: set}
	if req.ChangedSince != "" {
		if sel.Changed, err = set.ChangedSince(ctx, req.ChangedSince); err != nil {
			return nil, err
		}
		sel.Only = set.Downstream(sel.Changed)
	}
	return sel, nil
}

// Order returns the names of the selected stacks in dependency order, or
// in the order op runs them (destroy: the readers first).
func (s *Selection) Order(op StackOp) []string {
	var out []string
	for _, st := range s.Set.Stacks {
		if s.Only == nil || s.Only[st.Name] {
			out = append(out, st.Name)
		}
	}
	if op == OpDestroy {
		slices.Reverse(out)
	}
	return out
}
