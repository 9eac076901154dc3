package cli

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

// ignoreWiring compares options structs on what argv gave them: the use
// case funcs and IO bound by NewCmdX are left out.
var ignoreWiring = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type().Kind() == reflect.Func }, cmp.Ignore()),
	cmpopts.IgnoreTypes(&termui.IOStreams{}),
	cmp.Exporter(func(reflect.Type) bool { return true }),
}

// checkParsed checks what parse gave a NewCmdX: with wantErr, a usage
// error saying it and runF never called; else options equal to want but
// for the wiring, and every use case func and IO bound.
func checkParsed[T any](t *testing.T, err error, got *T, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		checkUsage(t, err, wantErr)
		if got != nil {
			t.Fatal("run called after a usage error")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, *got, ignoreWiring); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	v := reflect.ValueOf(got).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) { // an embedded struct's fields too
		if fv := v.FieldByIndex(sf.Index); (fv.Kind() == reflect.Func || fv.Kind() == reflect.Pointer) && fv.IsNil() {
			t.Errorf("%s left unset by NewCmdX", sf.Name)
		}
	}
}

// shopConfig is the parsed deployer.yaml of stack shop: environment dev,
// service app with one Command component api.
func shopConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte("stack: shop\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n      api: {kind: Command, command: {create: \"true\"}}\n"), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// shopPlan is the plan of shopConfig against a state at serial 3: app/api
// created.
func shopPlan(t *testing.T) *plan.Plan {
	t.Helper()
	res, err := shopConfig(t).Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	st := &statestore.State{Serial: 3, Lineage: "6f1c1b7e-1d9a-4b4e-9d3c-2f7f7a0e5b11", Resources: map[string]*statestore.Resource{}}
	p, err := plan.Build(res, st, plan.Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// parseCmd builds newCmd's command on a fresh app.Factory (json is --json, the
// global flag the root command would bind), parses argv, and returns the options
// runF got (nil when run was not called), the app.Factory and parse's error.
func parseCmd[O any](t *testing.T, json bool, newCmd func(*app.Factory, func(context.Context, *O) error) *cobra.Command, argv ...string) (*O, *app.Factory, error) {
	t.Helper()
	io, _, _ := termui.Test("")
	f := app.NewFactory(io)
	f.JSON = json
	var got *O
	cmd := newCmd(f, func(_ context.Context, o *O) error { got = o; return nil })
	err := parse(t, cmd, argv...)
	return got, f, err
}
