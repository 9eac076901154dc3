package plan

import (
	"maps"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// KindSettings is how a plan treats the settings of one kind: the kind's
// own sections of deployer.yaml as its engine decoded them
// (config.ResolvedComponent.Settings, Step.Settings). They are desired
// config: a plan diffs them under the section's key ("command.update",
// docs/plan.md#diff-rules), so what a reviewer approves includes them. The
// engine that declares the kind supplies it (engine.Kind.Settings); the
// zero value records nothing and says nothing about deletes.
type KindSettings struct {
	// Recorded returns the settings r was last applied with, as the kind's
	// engine recorded them in r, older forms of the state included. ok is
	// false when r does not hold them: the plan then diffs none of them
	// (nothing to compare with), and a delete step carries what was
	// returned (what an older state kept, if anything).
	Recorded func(r *statestore.Resource) (settings map[string]map[string]any, ok bool)
	// Runs returns what deleting a component with settings runs, shown as
	// the step's runs (Step.Runs); nil when there is nothing to show.
	Runs func(settings map[string]map[string]any) *string
}

func (k KindSettings) recorded(r *statestore.Resource) (map[string]map[string]any, bool) {
	if k.Recorded == nil || r == nil {
		return nil, false
	}
	return k.Recorded(r)
}

func (k KindSettings) runs(settings map[string]map[string]any) *string {
	if k.Runs == nil {
		return nil
	}
	return k.Runs(settings)
}

// kind returns the settings rules of kind (Options.Settings).
func (o Options) kind(kind string) KindSettings {
	if o.Settings == nil {
		return KindSettings{}
	}
	return o.Settings(kind)
}

// priorSettings are the settings the existing instance old of component c
// is deleted with on a replace (Step.PriorSettings): what its state
// recorded under the rules of its own kind, older forms included, as
// Terraform destroys the prior instance with its prior state; when it
// recorded nothing, c's settings if the kind is the same (a state written
// before settings were recorded: they are taken as unchanged), else nil.
func priorSettings(old *statestore.Resource, c *config.ResolvedComponent, o Options) map[string]map[string]any {
	s, ok := o.kind(old.Kind).recorded(old)
	if ok || slices.ContainsFunc(slices.Collect(maps.Values(s)), func(m map[string]any) bool { return len(m) > 0 }) {
		return s
	}
	if old.Kind == c.Kind {
		return c.Settings
	}
	return nil
}

// settingsDiffs adds to d the diffs between the settings a component was
// last applied with, when its state recorded them, and the desired ones,
// section by section in key order ("command.update").
func settingsDiffs(d *differ, desired map[string]map[string]any, prior *statestore.Resource, k KindSettings) {
	old, recorded := k.recorded(prior)
	if !recorded || desired == nil {
		return
	}
	for _, name := range unionKeys(old, desired) {
		if !Equal(old[name], desired[name]) {
			d.compare(name, old[name], desired[name])
		}
	}
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
	d.compare(PathOutputs, map[string]any(s.Prior.Outputs), read)
	s.Diffs = append(s.Diffs, d.out...)
	if s.Action == NoOp {
		s.Action = Update
	}
}
