package deploy

import (
	"regexp"
	"slices"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// failedComponent finds the components an engine error names: each of its
// failures starts a line with "component ADDR: " (the engines' errors,
// joined one a line when several steps failed).
var failedComponent = regexp.MustCompile(`(?m)^component ([^\s:]+): `)

// Failure is the last deployment of a state when it did not succeed, and
// the components its error names that have no entry in the state: a
// failed create records nothing (docs/decisions.md "Failed components"),
// so they are shown from the deployment record (docs/commands.md#deployer-state-show).
type Failure struct {
	Deployment statestore.Deployment
	NotCreated []string // sorted
}

// lastFailure is the Failure of st, or nil when its newest deployment
// record succeeded (or it has none).
func lastFailure(st *statestore.State) *Failure {
	if len(st.DeploymentHistory) == 0 {
		return nil
	}
	d := st.DeploymentHistory[0]
	if d.Status == statestore.DeploymentSuccess || d.Status == "" {
		return nil
	}
	f := &Failure{Deployment: d}
	for _, m := range failedComponent.FindAllStringSubmatch(d.Error, -1) {
		if _, ok := st.Resources[m[1]]; !ok && !slices.Contains(f.NotCreated, m[1]) {
			f.NotCreated = append(f.NotCreated, m[1])
		}
	}
	slices.Sort(f.NotCreated)
	return f
}
