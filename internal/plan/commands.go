package plan

import (
	"github.com/deployer-dev/deployer/internal/statestore"
)

// PathCommand is the path prefix of the diffs of a component's commands:
// "command.update" (docs/plan.md#diff-rules). Commands are desired config:
// what a reviewer approves includes what will run.
const PathCommand = "command"

// Keys of a resource's actual_state where the commands it was applied with
// are recorded (docs/state-format.md "Commands"): CommandsKey holds
// config.CommandSpec.Fields(); legacyDeleteKey is the delete command alone,
// as states written before commands were recorded kept it.
const (
	CommandsKey     = "commands"
	legacyDeleteKey = "delete_command"
)

// RecordCommands records spec's commands in actual (a copy of actual is
// returned; nil spec returns actual unchanged), so a later plan diffs them
// and a delete after the component left deployer.yaml runs the command the
// state holds.
func RecordCommands(actual map[string]any, spec map[string]any) map[string]any {
	if spec == nil {
		return actual
	}
	out := make(map[string]any, len(actual)+1)
	for k, v := range actual {
		if k != legacyDeleteKey {
			out[k] = v
		}
	}
	out[CommandsKey] = spec
	return out
}

// RecordedCommands returns the commands r was last applied with, from its
// actual_state; recorded is false when the state does not hold them (no
// commands, or a state written before they were recorded: then only a
// legacy delete command may be known, returned in spec).
func RecordedCommands(r *statestore.Resource) (spec map[string]any, recorded bool) {
	if r == nil {
		return nil, false
	}
	if m, ok := r.ActualState[CommandsKey].(map[string]any); ok {
		return m, true
	}
	if del, ok := r.ActualState[legacyDeleteKey].(string); ok {
		return map[string]any{"delete": del}, false
	}
	return nil, false
}

// commandDiffs adds to d the diffs between the commands a component was
// last applied with (old, when recorded) and the desired ones: paths
// "command.create", "command.update", "command.delete", "command.timeout".
// Nothing is compared when the state did not record them (docs/decisions.md).
func commandDiffs(d *differ, desired map[string]any, prior *statestore.Resource) {
	om, recorded := RecordedCommands(prior)
	if !recorded || desired == nil {
		return
	}
	nm := desired
	if Equal(om, nm) {
		return
	}
	sub := &differ{}
	sub.walk(PathCommand, om, nm, false)
	d.out = append(d.out, sub.out...)
}

// StateOnly reports whether every diff of s is one that changes what is
// recorded but not what exists: command.delete and command.timeout, which
// take effect at the next delete or run, and command.read, which reads
// and changes nothing. Such an update runs neither create nor update
// (docs/decisions.md).
func StateOnly(s Step) bool {
	if s.Action != Update || len(s.Diffs) == 0 {
		return false
	}
	for _, f := range s.Diffs {
		if f.Path != PathCommand+".delete" && f.Path != PathCommand+".timeout" && f.Path != PathCommand+".read" {
			return false
		}
	}
	return true
}

// runs returns what a delete step will run: its command's delete text ("" when
// it has none: the component is only removed from the state); nil for
// components without commands.
func runs(settings map[string]map[string]any) *string {
	spec, ok := settings[PathCommand]
	if !ok {
		return nil
	}
	s, _ := spec["delete"].(string)
	return &s
}

// PathOutputs is the pseudo-path of the diffs of a data component's outputs:
// "(outputs).outputs.base/pet.id" is an output as the state recorded it
// (old) and as read when planning (new).
const PathOutputs = "(outputs)"

// readDiffs makes s, a data component in both the configuration and the
// state, an update when the outputs read when planning differ from the
// ones the state recorded, with (outputs) diffs (secret values masked).
func readDiffs(s *Step, read map[string]any) {
	if s.Prior == nil || s.Action == Replace || Equal(map[string]any(s.Prior.Outputs), read) {
		return
	}
	d := &differ{}
	d.walk(PathOutputs, map[string]any(s.Prior.Outputs), read, false)
	s.Diffs = append(s.Diffs, d.out...)
	if s.Action == NoOp {
		s.Action = Update
	}
}
