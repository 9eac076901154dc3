package command

import (
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Keys of a resource's actual_state where the Command engine records the
// commands the component was applied with (docs/state-format.md
// "Engine data"): CommandsKey holds Spec.Fields(); legacyDeleteKey is the
// delete command alone, as states written before commands were recorded
// kept it (read, never written).
const (
	CommandsKey     = "commands"
	legacyDeleteKey = "delete_command"
)

// planSettings is how a plan treats the command section (plan.KindSettings).
var planSettings = plan.KindSettings{Recorded: recorded, Runs: runs}

// recordCommands returns a copy of actual with the commands the step was
// applied with (Step.Settings) under CommandsKey, and without the legacy
// key; actual itself when the step has no commands.
func recordCommands(actual map[string]any, st plan.Step) map[string]any {
	cmds, ok := st.Settings[Section]
	if !ok {
		return actual
	}
	out := make(map[string]any, len(actual)+1)
	for k, v := range actual {
		if k != legacyDeleteKey {
			out[k] = v
		}
	}
	out[CommandsKey] = cmds
	return out
}

// recorded returns the commands r was last applied with, from its
// actual_state; ok is false when the state does not hold them (a state
// written before they were recorded: then only a legacy delete command may
// be known, returned in the settings).
func recorded(r *statestore.Resource) (settings map[string]map[string]any, ok bool) {
	if m, isMap := r.ActualState[CommandsKey].(map[string]any); isMap {
		return map[string]map[string]any{Section: m}, true
	}
	if del, isStr := r.ActualState[legacyDeleteKey].(string); isStr {
		return map[string]map[string]any{Section: {"delete": del}}, false
	}
	return nil, false
}

// runs is what a delete of a component with settings runs: its delete
// command, "" when it has none (it is only removed from the state); nil
// without a command section.
func runs(settings map[string]map[string]any) *string {
	cmds, ok := settings[Section]
	if !ok {
		return nil
	}
	s, _ := cmds["delete"].(string)
	return &s
}

// stateOnly reports whether every diff of s is one that changes what is
// recorded but not what exists: command.delete and command.timeout, which
// take effect at the next delete or run, and command.read, which reads
// and changes nothing. Such an update runs neither create nor update
// (docs/decisions.md).
func stateOnly(s plan.Step) bool {
	if s.Action != plan.Update || len(s.Diffs) == 0 {
		return false
	}
	for _, f := range s.Diffs {
		if f.Path != Section+".delete" && f.Path != Section+".timeout" && f.Path != Section+".grace" && f.Path != Section+".read" && f.Path != plan.PathProtect {
			return false
		}
	}
	return true
}
