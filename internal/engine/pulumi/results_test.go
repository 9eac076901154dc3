package pulumi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

const urnBase = "urn:pulumi:production::user-platform::"

// partial is Pulumi's state after an update cancelled while the api was
// being created: the database finished in this run, the api did not.
var partial = &snapshot{Resources: []snapResource{
	{URN: urnBase + "pulumi:pulumi:Stack::user-platform-production", Type: "pulumi:pulumi:Stack"},
	{URN: urnBase + "deployer:component:RDS::user-service-database", Type: "deployer:component:RDS",
		Outputs: map[string]any{"deployment_id": "dep-2", "deployer": map[string]any{
			"outputs": map[string]any{"endpoint": "db.example", "port": "5432"},
			"pulumi":  map[string]any{"urn": urnBase + "deployer:component:RDS$aws:rds/instance:Instance::user-service-database", "id": "user-db-prod"},
		}}},
	{URN: urnBase + "deployer:component:RDS$aws:rds/instance:Instance::user-service-database", Type: "aws:rds/instance:Instance",
		ID: "user-db-prod", Parent: urnBase + "deployer:component:RDS::user-service-database",
		Outputs: map[string]any{"address": "db.example", "port": 5432.0, "instanceClass": "db.r6g.2xlarge"}},
	{URN: urnBase + "deployer:component:MicroService::user-service-api", Type: "deployer:component:MicroService",
		Outputs: map[string]any{"deployment_id": "dep-1", "deployer": map[string]any{"outputs": map[string]any{"url": "old"}}}},
	{URN: urnBase + "deployer:component:MicroService$aws:lb/targetGroup:TargetGroup::user-service-api", Type: "aws:lb/targetGroup:TargetGroup",
		Parent: urnBase + "deployer:component:MicroService::user-service-api"},
	{URN: urnBase + "deployer:component:MicroService$aws:ecs/service:Service::user-service-api", Type: "aws:ecs/service:Service",
		Parent: urnBase + "deployer:component:MicroService::user-service-api"},
}}

func TestResultsAfterCancelRecordWhatPulumiReports(t *testing.T) {
	steps := []plan.Step{
		{Address: "user-service/database", Kind: "RDS", Action: plan.Update},
		{Address: "user-service/api", Kind: "MicroService", Action: plan.Update},
		{Address: "user-service/cache", Kind: "ElastiCacheRedis", Action: plan.Delete},
		{Address: "user-service/old", Kind: "RDS", Action: plan.Delete},
	}
	now := time.Now()
	got := results(steps, partial, "dep-2", now, now, context.Canceled, "cancelled", nil, nil)
	want := map[string]engine.Status{
		"user-service/database": "ready",     // recorded outputs in this run
		"user-service/api":      "cancelled", // outputs are from dep-1
		"user-service/cache":    "deleted",   // gone from Pulumi's state
		"user-service/old":      "deleted",
	}
	for _, r := range got {
		if r.Status != want[r.Address] {
			t.Errorf("%s: status %s, want %s", r.Address, r.Status, want[r.Address])
		}
	}
	if db := got[0]; info(t, db).ID != "user-db-prod" || db.Outputs["port"] != "5432" {
		t.Errorf("database result = %+v, want its outputs and urn/id", db)
	}
	api := got[1]
	if !errors.Is(api.Err, context.Canceled) {
		t.Errorf("api err = %v, want context.Canceled", api.Err)
	}
	if len(info(t, api).URNs) != 2 {
		t.Errorf("api pulumi = %s, want the URNs of the children Pulumi did create", api.EngineData)
	}
}

func TestDriftComparesActualStateWithTheCloud(t *testing.T) {
	steps := []plan.Step{
		{Address: "user-service/database", Kind: "RDS", Prior: &statestore.Resource{ActualState: map[string]any{
			"instance_id": "user-db-prod", "endpoint": "db.example", "port": 5432.0, "instance_class": "db.r6g.xlarge"}}},
		{Address: "user-service/gone", Kind: "RDS", Prior: &statestore.Resource{}},
	}
	got := drift(partial, steps)
	if len(got) != 2 {
		t.Fatalf("drift = %+v, want the database's instance class and the missing component", got)
	}
	db := got[0]
	if db.Address != "user-service/database" || len(db.Fields) != 1 || db.Fields[0].Path != "instance_class" ||
		db.Fields[0].Old != "db.r6g.xlarge" || db.Fields[0].New != "db.r6g.2xlarge" {
		t.Errorf("database drift = %+v, want instance_class db.r6g.xlarge -> db.r6g.2xlarge", db)
	}
	if !got[1].Missing {
		t.Errorf("gone drift = %+v, want Missing", got[1])
	}
}

func TestCleanValueDropsInternalsAndMarksSecrets(t *testing.T) {
	raw := map[string]any{
		"name":                     "pet",
		"__pulumi_raw_state_delta": map[string]any{"x": 1.0},
		"__meta":                   "{}",
		"password":                 map[string]any{secretSigKey: secretSig, "plaintext": `"hunter2"`},
		"nested":                   []any{map[string]any{secretSigKey: secretSig, "plaintext": `{"a":1}`}},
	}
	got := cleanValue(raw).(map[string]any)
	if _, ok := got["__pulumi_raw_state_delta"]; ok || got["__meta"] != nil {
		t.Errorf("internals kept: %v", got)
	}
	if pw := got["password"]; !plan.IsSecretValue(pw) || pw.(map[string]any)["value"] != "hunter2" {
		t.Errorf("password = %#v, want {secret: true, value: hunter2}", pw)
	}
	if n := got["nested"].([]any)[0]; !plan.IsSecretValue(n) {
		t.Errorf("nested secret = %#v", n)
	}
}

func TestComponentValueReopensAWhollySecretValue(t *testing.T) {
	comp := &snapResource{URN: "c", Outputs: map[string]any{"deployer": map[string]any{secretSigKey: secretSig,
		"plaintext": `{"outputs":{"user":"admin","password":"s3cret-pw","dsn":"pg://admin:s3cret-pw@db"}}`}}}
	kids := []snapResource{{Parent: "c", Outputs: map[string]any{"user": "admin",
		"password": map[string]any{secretSigKey: secretSig, "plaintext": `"s3cret-pw"`}}}}
	outs := componentValue(comp, kids)["outputs"].(map[string]any)
	if outs["user"] != "admin" || !plan.IsSecretValue(outs["password"]) || !plan.IsSecretValue(outs["dsn"]) {
		t.Errorf("outputs = %v, want user plain, password and dsn (contains it) secret", outs)
	}
}

func TestShortenKeepsPulumiDiagnostics(t *testing.T) {
	full := errors.New("failed to run update: exit status 255\ncode: 255\nstdout: Updating (dev):\n +  x creating\n\nDiagnostics:\n" +
		"  deployertest:index:Failing (app-bad):\n    error: quota exceeded\n      for widgets\n\n" +
		"  pulumi:pulumi:Stack (p-dev):\n    error: update failed\n\nResources:\n    2 unchanged\n\nstderr: \n")
	if got := shorten(full).Error(); got != "deployertest:index:Failing (app-bad): error: quota exceeded for widgets" {
		t.Errorf("shorten = %q", got)
	}
	if !errors.Is(shorten(full), full) {
		t.Error("the short error must wrap the full one")
	}
}

// killed is Pulumi's state of stack many after its update was killed: pet-a
// finished in this run, pet-b's resource was created but the run stopped
// before its component recorded outputs, pet-c's create, old's delete and
// the creation of pet-e's component were in flight, and gone's resource was
// deleted before its component.
var killed = func() *snapshot {
	const base = "urn:pulumi:dev::many::"
	comp := func(name string, outputs map[string]any) snapResource {
		return snapResource{URN: base + "deployer:component:PulumiResource::" + name, Type: "deployer:component:PulumiResource", Outputs: outputs}
	}
	child := func(name, id string) snapResource {
		return snapResource{URN: base + "deployer:component:PulumiResource$deployertest:index:RandomName::" + name, Type: "deployertest:index:RandomName",
			ID: id, Parent: base + "deployer:component:PulumiResource::" + name, Outputs: map[string]any{"name": "otter-" + id}}
	}
	s := &snapshot{Resources: []snapResource{
		comp("app-pet-a", map[string]any{"deployment_id": "dep-2", "deployer": map[string]any{
			"outputs": map[string]any{"id": "a1", "properties": map[string]any{"name": "otter-a1"}},
			"pulumi":  map[string]any{"urn": child("app-pet-a", "a1").URN, "id": "a1"}}}),
		child("app-pet-a", "a1"),
		comp("app-pet-b", nil), child("app-pet-b", "b1"),
		comp("app-pet-c", nil),
		comp("app-old", nil), child("app-old", "o1"),
		comp("app-gone", nil),
	}}
	s.Pending = []pendingOp{{Type: "creating", Resource: child("app-pet-c", "")}, {Type: "deleting", Resource: child("app-old", "o1")},
		{Type: "creating", Resource: comp("app-pet-e", nil)}}
	return s
}()

func TestResultsAfterKillRecordExactlyWhatPulumiHolds(t *testing.T) {
	steps := []plan.Step{
		{Address: "app/pet-a", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-b", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-c", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-d", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/old", Kind: "PulumiResource", Action: plan.Delete},
		{Address: "app/gone", Kind: "PulumiResource", Action: plan.Delete},
		{Address: "app/pet-e", Kind: "PulumiResource", Action: plan.Create},
	}
	now := time.Now()
	got := map[string]engine.Result{}
	for _, r := range results(steps, killed, "dep-2", now, now, context.Canceled, "cancelled", nil, nil) {
		got[r.Address] = r
	}
	for addr, want := range map[string]struct {
		status engine.Status
		id     string // the id deployer records; "" records nothing
	}{
		"app/pet-a": {"ready", "a1"},
		"app/pet-b": {"cancelled", "b1"}, // created, its component unfinished
		"app/pet-c": {"pending", ""},     // in flight: Pulumi holds no resource
		"app/pet-d": {"cancelled", ""},   // never reached
		"app/old":   {"pending", "o1"},   // its delete in flight: still held
		"app/gone":  {"deleted", ""},     // its component holds nothing
		"app/pet-e": {"pending", ""},     // its component's creation in flight
	} {
		r := got[addr]
		if r.Status != want.status {
			t.Errorf("%s: status %s, want %s", addr, r.Status, want.status)
		}
		switch {
		case want.id == "" && r.EngineData != nil:
			t.Errorf("%s: records %s, but Pulumi holds no resource of it", addr, r.EngineData)
		case want.id != "" && info(t, r).ID != want.id:
			t.Errorf("%s: records %s, want id %s", addr, r.EngineData, want.id)
		}
	}
	if b := got["app/pet-b"]; b.Outputs["id"] != "b1" || b.Outputs["properties"].(map[string]any)["name"] != "otter-b1" {
		t.Errorf("app/pet-b outputs = %v, want the outputs of its resource in Pulumi's state", b.Outputs)
	}
	if r := results(steps, nil, "dep-2", now, now, context.Canceled, "cancelled", nil, nil); r[5].Status != "cancelled" || r[5].EngineData != nil {
		t.Errorf("with Pulumi's state unknown a delete must not count as done: %+v", r[5])
	}
}

func TestClearPendingNamesEachOperationAndItsFix(t *testing.T) {
	steps := []plan.Step{{Address: "app/pet-c"}, {Address: "app/old"}, {Address: "app/pet-e"}}
	err := clearPending(context.Background(), auto.Stack{}, apitype.UntypedDeployment{Deployment: []byte("not json")}, killed.Pending, steps, "dev", "deploy")
	for _, want := range []string{
		"3 operations pending",
		"app/pet-c (urn:pulumi:dev::many::deployer:component:PulumiResource$deployertest:index:RandomName::app-pet-c): create pending",
		"`deployer deploy -e dev` creates it again",
		"app/old (", "delete pending: still recorded; `deployer deploy -e dev` deletes it again",
		"app/pet-e (urn:pulumi:dev::many::deployer:component:PulumiResource::app-pet-e): create pending",
		"run pulumi refresh --clear-pending-creates",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("clearPending error lacks %q:\n%v", want, err)
		}
	}
}

// info decodes the Pulumi record of r; the zero Info when it has none.
func info(t *testing.T, r engine.Result) Info {
	t.Helper()
	i, err := InfoOf(r.EngineData)
	if err != nil {
		t.Fatal(err)
	}
	if i == nil {
		return Info{}
	}
	return *i
}
