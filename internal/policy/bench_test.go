package policy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// benchPlan is a production plan of n components: RDS instances (protected
// and encrypted, every 10th updated), Command components (every 10th
// created) and MicroServices, none of which the examples deny.
func benchPlan(n int) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "big", Environment: "production"}
	for i := range n {
		svc, comp := fmt.Sprintf("svc%04d", i/10), fmt.Sprintf("c%d", i%10)
		s := plan.Step{Address: svc + "/" + comp, Service: svc, Component: comp, Action: plan.NoOp}
		if i%10 == 0 {
			s.Action = plan.Update
		}
		switch i % 3 {
		case 0:
			s.Kind, s.Config = "RDS", safeRDS()
			if s.Action == plan.Update {
				s.Diffs = []plan.FieldDiff{{Path: "instance.class", Old: "db.t4g.micro", New: "db.r6g.large", Op: plan.OpChange}}
			}
		case 1:
			s.Kind, s.Config = "Command", map[string]any{"title": comp}
			s.Settings = map[string]map[string]any{"command": {"create": "sh scripts/deploy.sh " + comp, "delete": "rm -rf out/" + comp}}
		default:
			s.Kind, s.Config = "MicroService", map[string]any{"image": map[string]any{"repository": "ghcr.io/x/" + svc, "tag": "v1"}, "port": 8080}
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

// BenchmarkEvaluateExamples evaluates the example policies against a
// 10,000-component plan: the document, the input and the evaluation, as
// plan and deploy do (docs/policy.md#bounds); cpu-ms/op is the process's
// CPU time per evaluation, steadier than ns/op on a shared machine.
func BenchmarkEvaluateExamples(b *testing.B) {
	e := compile(b, examples)
	p := benchPlan(10_000)
	b.ReportAllocs()
	cpu0, n := testenv.CPUTime(), 0
	defer func() { b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(max(n, 1)), "cpu-ms/op") }()
	for b.Loop() {
		n++
		r, err := e.Evaluate(context.Background(), input(b, p, thursday))
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Denied()) != 0 {
			b.Fatalf("denied: %+v", r.Denied())
		}
	}
}
