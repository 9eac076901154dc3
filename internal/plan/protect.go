package plan

import (
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/exitcode"
)

// PathProtect is the diff path of a change of a component's protect: flag
// alone (docs/configuration.md#protect): the state records it, no engine runs.
const PathProtect = "(protect)"

// LifecycleOnly reports whether s is an update of the component's protect:
// flag and nothing else: deploy records it in the state without running
// the component's engine.
func (s Step) LifecycleOnly() bool {
	if s.Action != Update || len(s.Diffs) == 0 {
		return false
	}
	for _, d := range s.Diffs {
		if d.Path != PathProtect {
			return false
		}
	}
	return true
}

// protectDiff adds the (protect) diff to s when the protect: flag the state
// recorded differs from the configured one.
func protectDiff(s *Step) {
	if s.Prior == nil || s.Prior.Lifecycle.Protect == s.Protect {
		return
	}
	s.Diffs = append(s.Diffs, FieldDiff{Path: PathProtect, Old: s.Prior.Lifecycle.Protect, New: s.Protect, Op: OpChange})
}

// ProtectedStep is one step of a plan that would delete or replace a
// protected component.
type ProtectedStep struct {
	Address string
	Action  Action // Delete or Replace
	// Removed says the component is no longer in deployer.yaml: its
	// protection is the one its state recorded.
	Removed bool
}

// ProtectedError refuses a plan that would delete or replace protected
// components (docs/configuration.md#protect); nothing was locked, run or
// written.
type ProtectedError struct {
	Steps []ProtectedStep
}

func (e *ProtectedError) Error() string {
	var b strings.Builder
	for i, s := range e.Steps {
		if i > 0 {
			b.WriteString("\n")
		}
		verb := "delete"
		if s.Action == Replace {
			verb = "replace"
		}
		if s.Removed {
			fmt.Fprintf(&b, "%s is protected (its state records protect: true) and this plan would delete it, as it is no longer in deployer.yaml: to delete it, put it back with protect: false, deploy, then remove it", s.Address)
			continue
		}
		fmt.Fprintf(&b, "%s is protected (protect: true) and this plan would %s it: to %s it, set protect: false on it in deployer.yaml, deploy, then %s", s.Address, verb, verb, again(s.Action))
	}
	b.WriteString("\nnothing was changed")
	return b.String()
}

func again(a Action) string {
	if a == Replace {
		return "deploy the change again"
	}
	return "remove or destroy it"
}

// CheckProtected returns a *ProtectedError naming every step of p that
// would delete or replace a protected component, nil when none does.
func CheckProtected(p *Plan) error {
	var out []ProtectedStep
	for _, s := range p.Steps {
		if !s.Protect || (s.Action != Delete && s.Action != Replace) {
			continue
		}
		out = append(out, ProtectedStep{Address: s.Address, Action: s.Action, Removed: s.Action == Delete && s.Config == nil && !p.Destroy})
	}
	if out == nil {
		return nil
	}
	return &ProtectedError{Steps: out}
}

// DeployerExitCode is 6, refused (docs/exit-codes.md).
func (e *ProtectedError) DeployerExitCode() int { return exitcode.Refused }
