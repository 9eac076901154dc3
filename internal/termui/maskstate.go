package termui

import (
	"maps"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// MaskState returns a copy of st to print: every secret value (sealed or
// not) is "(sensitive)". The stored checksums are kept as they are.
func MaskState(st *statestore.State) *statestore.State {
	cp := *st
	cp.Resources = make(map[string]*statestore.Resource, len(st.Resources))
	for addr, r := range st.Resources {
		c := *r
		c.DesiredConfig = maskMap(r.DesiredConfig)
		c.ActualState = maskMap(r.ActualState)
		c.Outputs = maskMap(r.Outputs)
		if r.Inputs != nil {
			in := &statestore.ResolvedInputs{Dependencies: make(map[string]map[string]any, len(r.Inputs.Dependencies))}
			for dep, m := range r.Inputs.Dependencies {
				in.Dependencies[dep] = maskMap(m)
			}
			c.Inputs = in
		}
		cp.Resources[addr] = &c
	}
	cp.Outputs = maskMap(st.Outputs)
	cp.DeploymentHistory = append([]statestore.Deployment(nil), st.DeploymentHistory...)
	return &cp
}

func maskMap(m map[string]any) map[string]any {
	out, _ := plan.Mask(maps.Clone(m)).(map[string]any)
	return out
}
