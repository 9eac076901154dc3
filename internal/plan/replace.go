package plan

import (
	"fmt"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
)

// PathReplace is the pseudo-path of the diff of a replace asked for with
// --replace (Options.Replace).
const PathReplace = "(replace)"

// ReplaceError: a --replace that names nothing to replace.
type ReplaceError struct{ Msg string }

func (e *ReplaceError) Error() string { return e.Msg }

// replaceList is o.Replace sorted, each checked: declared in desired and
// in scope (in, the addresses in o.Scope), and not with a destroy
// (*ReplaceError otherwise).
func replaceList(desired *config.Resolved, o Options, in map[string]bool) ([]string, error) {
	if len(o.Replace) == 0 {
		return nil, nil
	}
	if o.Destroy {
		return nil, &ReplaceError{Msg: "--replace cannot be used with a destroy"}
	}
	out := slices.Compact(slices.Sorted(slices.Values(o.Replace)))
	for _, a := range out {
		if desired.Components[a] == nil {
			return nil, &ReplaceError{Msg: fmt.Sprintf("--replace %s: no such component in deployer.yaml (write SERVICE/NAME)", a)}
		}
		if !in[a] {
			return nil, &ReplaceError{Msg: fmt.Sprintf("--replace %s: it is outside the plan's scope (%s)", a, o.Scope)}
		}
	}
	return out, nil
}

// forceReplace makes s, when replace names it, a replace asked for with
// --replace; a component not in the state (create, import) is a
// *ReplaceError.
func forceReplace(s *Step, replace []string) error {
	if !slices.Contains(replace, s.Address) {
		return nil
	}
	switch s.Action {
	case Create:
		return &ReplaceError{Msg: fmt.Sprintf("--replace %s: it is not in the state, so there is nothing to replace (the plan creates it)", s.Address)}
	case Import:
		return &ReplaceError{Msg: fmt.Sprintf("--replace %s: it is being imported, not replaced", s.Address)}
	}
	s.Action = Replace
	s.Diffs = append([]FieldDiff{{Path: PathReplace, Old: "kept", New: "replaced on request (--replace)", Op: OpChange, ForcesReplacement: true}}, s.Diffs...)
	return nil
}
