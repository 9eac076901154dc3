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

// partial is Pulumi's state, in the previous layout (each component's
// resources under a wrapper), after an update cancelled while the api was
// being created: the database finished in this run (doneDB), the api did
// not.
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

// doneDB is what the program recorded of partial's run: the database finished.
var doneDB = map[string]any{"user-service/database": map[string]any{
	"outputs": map[string]any{"endpoint": "db.example", "port": "5432"},
	"pulumi":  map[string]any{"urn": urnBase + "deployer:component:RDS$aws:rds/instance:Instance::user-service-database", "id": "user-db-prod"},
}}

func TestResultsAfterCancelRecordWhatPulumiReports(t *testing.T) {
	steps := []plan.Step{
		{Address: "user-service/database", Kind: "RDS", Action: plan.Update},
		{Address: "user-service/api", Kind: "MicroService", Action: plan.Update},
		{Address: "user-service/cache", Kind: "ElastiCacheRedis", Action: plan.Delete},
		{Address: "user-service/old", Kind: "RDS", Action: plan.Delete},
	}
	now := time.Now()
	got := results(steps, partial, doneDB, now, now, context.Canceled, "cancelled", upEvents{})
	want := map[string]engine.Status{
		"user-service/database": "ready",     // finished in this run
		"user-service/api":      "cancelled", // not finished
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
	raw := map[string]any{"secret": true, "value": map[string]any{"outputs": map[string]any{
		"user": "admin", "password": "s3cret-pw", "dsn": "pg://admin:s3cret-pw@db"}}}
	kids := []snapResource{{Outputs: map[string]any{"user": "admin",
		"password": map[string]any{secretSigKey: secretSig, "plaintext": `"s3cret-pw"`}}}}
	outs := componentValue(raw, kids)["outputs"].(map[string]any)
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
// before the program learnt it, pet-c's create and old's delete were in
// flight, and gone's resource was deleted; legacy is still under its
// wrapper of the previous layout, its move to the root pending.
var killed = func() *snapshot {
	const base = "urn:pulumi:dev::many::"
	res := func(name, id string) snapResource {
		return snapResource{URN: base + "deployertest:index:RandomName::" + name, Type: "deployertest:index:RandomName",
			ID: id, Parent: base + "pulumi:pulumi:Stack::many-dev", Outputs: map[string]any{"name": "otter-" + id}}
	}
	s := &snapshot{Resources: []snapResource{
		{URN: base + "pulumi:pulumi:Stack::many-dev", Type: "pulumi:pulumi:Stack"},
		res("app-pet-a", "a1"), res("app-pet-b", "b1"), res("app-old", "o1"),
		{URN: base + "deployer:component:PulumiResource::app-legacy", Type: "deployer:component:PulumiResource"},
		{URN: base + "deployer:component:PulumiResource$deployertest:index:RandomName::app-legacy", Type: "deployertest:index:RandomName",
			ID: "l1", Parent: base + "deployer:component:PulumiResource::app-legacy"},
	}}
	s.Pending = []pendingOp{{Type: "creating", Resource: res("app-pet-c", "")}, {Type: "deleting", Resource: res("app-old", "o1")},
		{Type: "updating", Resource: snapResource{URN: base + "deployertest:index:RandomName::app-legacy", Type: "deployertest:index:RandomName",
			Parent: base + "pulumi:pulumi:Stack::many-dev"}}}
	return s
}()

// doneA is what the program recorded of killed's run: pet-a finished.
var doneA = map[string]any{"app/pet-a": map[string]any{
	"outputs": map[string]any{"id": "a1", "properties": map[string]any{"name": "otter-a1"}},
	"pulumi":  map[string]any{"urn": "urn:pulumi:dev::many::deployertest:index:RandomName::app-pet-a", "id": "a1"}}}

func TestResultsAfterKillRecordExactlyWhatPulumiHolds(t *testing.T) {
	steps := []plan.Step{
		{Address: "app/pet-a", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-b", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-c", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/pet-d", Kind: "PulumiResource", Action: plan.Create},
		{Address: "app/old", Kind: "PulumiResource", Action: plan.Delete},
		{Address: "app/gone", Kind: "PulumiResource", Action: plan.Delete},
		{Address: "app/legacy", Kind: "PulumiResource", Action: plan.Update},
	}
	now := time.Now()
	got := map[string]engine.Result{}
	for _, r := range results(steps, killed, doneA, now, now, context.Canceled, "cancelled", upEvents{}) {
		got[r.Address] = r
	}
	for addr, want := range map[string]struct {
		status engine.Status
		id     string // the id deployer records; "" records nothing
	}{
		"app/pet-a":  {"ready", "a1"},
		"app/pet-b":  {"cancelled", "b1"}, // created, not learnt by the program
		"app/pet-c":  {"pending", ""},     // in flight: Pulumi holds no resource
		"app/pet-d":  {"cancelled", ""},   // never reached
		"app/old":    {"pending", "o1"},   // its delete in flight: still held
		"app/gone":   {"deleted", ""},     // Pulumi holds nothing of it
		"app/legacy": {"pending", "l1"},   // under its wrapper still, its update in flight
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
	if r := results(steps, nil, doneA, now, now, context.Canceled, "cancelled", upEvents{}); r[5].Status != "cancelled" || r[5].EngineData != nil {
		t.Errorf("with Pulumi's state unknown a delete must not count as done: %+v", r[5])
	}
}

func TestClearPendingNamesEachOperationAndItsFix(t *testing.T) {
	steps := []plan.Step{{Address: "app/pet-c", Kind: "PulumiResource"}, {Address: "app/old", Kind: "PulumiResource"},
		{Address: "app/legacy", Kind: "PulumiResource"}}
	err := clearPending(context.Background(), auto.Stack{}, apitype.UntypedDeployment{Deployment: []byte("not json")}, killed.Pending, steps, "dev", "deploy")
	for _, want := range []string{
		"3 operations pending",
		"app/pet-c (urn:pulumi:dev::many::deployertest:index:RandomName::app-pet-c): create pending",
		"`deployer deploy -e dev` creates it again",
		"app/old (", "delete pending: still recorded; `deployer deploy -e dev` deletes it again",
		"app/legacy (urn:pulumi:dev::many::deployertest:index:RandomName::app-legacy): update pending",
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
