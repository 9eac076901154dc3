package stateops

import (
	"regexp"
	"slices"

	"github.com/deployer-dev/deployer/internal/lockmgr"
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
// A failed import records nothing either: those components are in
// NotImported, not NotCreated.
type Failure struct {
	Deployment  statestore.Deployment
	NotCreated  []string // sorted
	NotImported []string // sorted
}

// failedImport matches the error of a component whose import failed (the
// Command engine runs its read as action "import").
var failedImport = regexp.MustCompile(`^component [^\s:]+: import `)

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
	for _, ix := range failedComponent.FindAllStringSubmatchIndex(d.Error, -1) {
		addr := d.Error[ix[2]:ix[3]]
		if _, ok := st.Resources[addr]; ok || slices.Contains(f.NotCreated, addr) || slices.Contains(f.NotImported, addr) {
			continue
		}
		if d.Type == string(lockmgr.OpImport) || failedImport.MatchString(d.Error[ix[0]:]) {
			f.NotImported = append(f.NotImported, addr)
		} else {
			f.NotCreated = append(f.NotCreated, addr)
		}
	}
	slices.Sort(f.NotCreated)
	slices.Sort(f.NotImported)
	return f
}
