package stacks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/config"
)

// BackendsError: a stack of the set references another stack of the set
// whose state lives in another state backend. A StackReference reads the
// producer's state from the consumer's own backend
// (docs/many-stacks.md#references-are-the-graph), so the consumer would
// never find it: with every stack on its own default file://.deployer, a
// deploy --all would fail on the first reader. Set.CheckBackends finds it
// before anything is planned; the error says the fix.
type BackendsError struct {
	Consumer, Producer           string // stack names
	ConsumerState, ProducerState string // where each one's state lives
}

func (e *BackendsError) Error() string {
	return fmt.Sprintf("stack %s reads stack %s, but their states live apart (%s and %s): a StackReference reads the "+
		"producer's state from the reader's own state backend; give every stack of the repository the same backend.state "+
		"(e.g. backend.state: file://../.deployer in each deployer.yaml, an s3:// bucket, or DEPLOYER_BACKEND_STATE=file://$PWD/.deployer)",
		e.Consumer, e.Producer, e.ConsumerState, e.ProducerState)
}

// stateLocation is where the state of cfg lives: a file:// backend's
// absolute directory (relative ones are relative to deployer.yaml), the
// URL of others.
func stateLocation(cfg *config.Config) string {
	raw := cfg.Backend.State
	if strings.HasPrefix(raw, "file://") {
		if dir, err := backendurl.FileDir(raw, cfg.Dir); err == nil {
			return "file://" + dir
		}
	}
	return raw
}

// CheckBackends returns a *BackendsError for the first reference (by
// consumer name, then reference) between two stacks of s whose state
// backends differ; nil when every reference can be read.
func (s *Set) CheckBackends() error {
	names := slices.Sorted(maps.Keys(s.byName))
	for _, n := range names {
		st := s.byName[n]
		for _, r := range st.Refs {
			p := s.byName[r.Stack]
			if p == nil || p == st {
				continue
			}
			if a, b := stateLocation(st.Config), stateLocation(p.Config); a != b {
				return &BackendsError{Consumer: st.Name, Producer: p.Name, ConsumerState: a, ProducerState: b}
			}
		}
	}
	return nil
}
