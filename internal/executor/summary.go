package executor

import (
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/engine"
)

// Summary is what one deploy or destroy did, counted once: the human line,
// --json, the GitHub job summary and annotations all render it
// (docs/commands.md#deploy).
type Summary struct {
	// Created, Updated, Replaced and Deleted count the components changed
	// as the state records them; Updated leaves out the replacements (the
	// state's resources_changed.updated counts both).
	Created, Updated, Replaced, Deleted int
	// Imported counts the components adopted by id (docs/operations.md#import);
	// not among Counts.
	Imported int
	// Failed are the steps the engine tried and failed (engine.StatusFailed),
	// by address, each with its error.
	Failed []engine.Result
	// Cancelled counts the steps stopped before they finished (Ctrl-C,
	// SIGTERM, a lost lock); Pending the ones whose operation was in flight
	// when the engine was killed (the error names each).
	Cancelled, Pending int
	// Unchanged counts the re-evaluated components left alone; NotStarted
	// the planned changes never started after a failure or cancellation.
	Unchanged, NotStarted int
}

// Counts are the summary's component counts by result, in a fixed order,
// zeros included: created, updated, replaced, deleted, failed (the steps
// the engine tried and failed, len(Failed)), cancelled, pending,
// not_started. Metrics record them under these names.
func (s Summary) Counts() []Count {
	return []Count{{"created", s.Created}, {"updated", s.Updated}, {"replaced", s.Replaced}, {"deleted", s.Deleted},
		{"failed", len(s.Failed)}, {"cancelled", s.Cancelled}, {"pending", s.Pending}, {"not_started", s.NotStarted}}
}

// Count is one component count of a Summary.
type Count struct {
	Result string
	N      int
}

// OK reports whether every planned change succeeded.
func (s Summary) OK() bool {
	return len(s.Failed) == 0 && s.Cancelled == 0 && s.Pending == 0 && s.NotStarted == 0
}

// Summarize counts what run did from its changes (Run.Changes) and
// results; planned is the number of changes the plan held.
func (run Run) Summarize(cs Changes, planned int) Summary {
	s := Summary{Created: cs.Counts.Created, Updated: cs.Counts.Updated - cs.Replaced, Replaced: cs.Replaced,
		Deleted: cs.Counts.Deleted, Imported: len(cs.Imported), Unchanged: len(run.Unchanged)}
	for _, r := range run.Results {
		switch r.Status {
		case engine.StatusFailed:
			s.Failed = append(s.Failed, r)
		case engine.StatusCancelled:
			s.Cancelled++
		case engine.StatusPending:
			s.Pending++
		}
	}
	slices.SortStableFunc(s.Failed, func(a, b engine.Result) int { return strings.Compare(a.Address, b.Address) })
	s.NotStarted = max(planned-len(run.Results)-len(run.Unchanged), 0)
	return s
}
