package stackref

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

func ref(cfg map[string]any) plan.Step {
	return plan.Step{Address: "upstream/base", Service: "upstream", Component: "base", Kind: Kind, Config: cfg, Action: plan.Create}
}

func TestReadGivesTheReferencedOutputsOrSaysWhatIsWrong(t *testing.T) {
	secret := map[string]any{"secret": true, "value": "hunter2"}
	stacks := map[string]engine.StackView{
		"base/dev":  {Components: map[string]map[string]any{"base/pet": {"id": "p-1"}, "base/db": {"password": secret}}},
		"named/dev": {Components: map[string]map[string]any{"base/pet": {"id": "p-1"}}, Outputs: map[string]any{"pet_id": "p-1", "db_password": secret}},
		"empty/dev": {},
	}
	in := engine.Inputs{Stack: "app", Env: "dev", StackOutputs: func(_ context.Context, stack, env string) (engine.StackView, error) {
		o, ok := stacks[stack+"/"+env]
		if !ok {
			return engine.StackView{}, errors.New("it has no state: deploy it first")
		}
		return o, nil
	}}
	got, err := Read(context.Background(), ref(map[string]any{"stack": "base"}), in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"stack": "organization/base/dev", "outputs": map[string]any{
		"base/pet": map[string]any{"id": "p-1"}, "base/db": map[string]any{"password": secret}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	// A stack that names outputs shows them as stack_outputs, secrets still marked.
	got, err = Read(context.Background(), ref(map[string]any{"stack": "named"}), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"pet_id": "p-1", "db_password": secret}, got["stack_outputs"]); diff != "" {
		t.Errorf("Read of a stack with outputs: stack_outputs (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{}, "upstream/base: config stack is required"},
		{map[string]any{"stack": "Base"}, "upstream/base: config stack:"},
		{map[string]any{"stack": "app"}, "a stack cannot reference itself (app/dev)"},
		{map[string]any{"stack": "gone"}, "upstream/base: StackReference to stack gone environment dev: it has no state: deploy it first"},
		{map[string]any{"stack": "empty"}, "stack empty environment dev: that stack has no components in its state"},
		{map[string]any{"stack": "base", "environment": "prod"}, "stack base environment prod"},
	} {
		if _, err := Read(context.Background(), ref(tc.cfg), in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestApplyRecordsWhatThePlanRead: Apply never reads again when the plan
// read: it records Inputs.Outputs, so what applies is what was shown.
func TestApplyRecordsWhatThePlanRead(t *testing.T) {
	read := map[string]any{"stack": "organization/base/dev", "outputs": map[string]any{"base/pet": map[string]any{"id": "p-1"}}}
	in := engine.Inputs{Stack: "app", Env: "dev", Outputs: map[string]map[string]any{"upstream/base": read},
		StackOutputs: func(context.Context, string, string) (engine.StackView, error) {
			t.Error("Apply read the referenced stack again")
			return engine.StackView{}, nil
		}}
	res, err := apply(New(), context.Background(), []plan.Step{ref(map[string]any{"stack": "base"})}, in)
	if err != nil || len(res) != 1 || res[0].Status != "ready" || !cmp.Equal(res[0].Outputs, read) {
		t.Fatalf("Apply = %+v, %v; want ready with the plan's outputs", res, err)
	}
	del := ref(map[string]any{"stack": "base"})
	del.Action = plan.Delete
	if res, err := apply(New(), context.Background(), []plan.Step{del}, in); err != nil || res[0].Status != "deleted" {
		t.Errorf("delete = %+v, %v", res, err)
	}
}

// apply makes one Apply call of e with steps and in.
func apply(e engine.Engine, ctx context.Context, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	resp, err := e.Apply(ctx, engine.ApplyRequest{Steps: steps, Inputs: in})
	return resp.Results, err
}
