package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// benchInput is 10,000 components in 1,000 services of 10, each service a
// dependency chain, with a state holding all of them (configs decoded from
// JSON as the state store does) with outputs and the resolved inputs each was
// applied with; every 10th component has a changed field, so the 4 after it
// in its chain are re-evaluated (propagation).
func benchInput(b *testing.B) (*config.Resolved, *statestore.State) {
	b.Helper()
	d := &config.Resolved{Stack: "big", Env: "prod", Components: map[string]*config.ResolvedComponent{}}
	st := &statestore.State{Serial: 1, Lineage: "l", Resources: map[string]*statestore.Resource{}}
	for s := range 1000 {
		for c := range 10 {
			addr := fmt.Sprintf("svc-%04d/comp-%02d", s, c)
			cfg := map[string]any{
				"image":     map[string]any{"repository": "registry.example.com/app", "tag": "v1.2.3"},
				"resources": map[string]any{"cpu": 512, "memory": 1024},
				"scaling":   map[string]any{"minReplicas": 2, "maxReplicas": 10},
				"ports":     []any{80, 443},
				"password":  map[string]any{"secret": true, "value": "pw"},
			}
			var deps []string
			if c > 0 {
				deps = []string{fmt.Sprintf("svc-%04d/comp-%02d", s, c-1)}
			}
			data, _ := json.Marshal(cfg)
			var stored map[string]any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(&stored); err != nil {
				b.Fatal(err)
			}
			if c == 5 {
				cfg["scaling"].(map[string]any)["minReplicas"] = 3
			}
			d.Components[addr] = &config.ResolvedComponent{Address: addr, Service: fmt.Sprintf("svc-%04d", s), Name: fmt.Sprintf("comp-%02d", c), Kind: "MicroService", Config: cfg, DependsOn: deps}
			st.Resources[addr] = &statestore.Resource{Kind: "MicroService", Status: "ready", DesiredConfig: stored, Dependencies: deps,
				Outputs: map[string]any{"id": addr, "endpoint": "https://" + addr + ".example.com", "password": map[string]any{"secret": true, "value": "pw"}}}
		}
	}
	for _, r := range st.Resources {
		r.Inputs = ResolveInputs(r.Dependencies, func(d string) map[string]any { return st.Resources[d].Outputs })
	}
	return d, st
}

// BenchmarkBuild10k plans 10,000 components with 1,000 changed and 4,000
// re-evaluated through propagation; cpu-ms/op is the process's CPU time per
// plan, steadier than ns/op on a shared machine.
func BenchmarkBuild10k(b *testing.B) {
	d, st := benchInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, n := testenv.CPUTime(), 0
	defer func() { b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(max(n, 1)), "cpu-ms/op") }()
	for b.Loop() {
		n++
		p, err := Build(d, st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if p.Summary.Update != 1000 || p.Summary.NoOp != 9000 || p.Summary.Reevaluate != 4000 {
			b.Fatalf("summary %+v", p.Summary)
		}
	}
}

// BenchmarkBuild10kFirstDeploy plans the same 10,000 components with no state:
// every field is an add diff.
func BenchmarkBuild10kFirstDeploy(b *testing.B) {
	d, _ := benchInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Build(d, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
