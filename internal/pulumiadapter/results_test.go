package pulumiadapter

import (
	"context"
	"errors"
	"testing"
	"time"

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
	got := results(steps, partial, nil, "dep-2", now, now, context.Canceled, "cancelled")
	want := map[string]string{
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
	if db := got[0]; db.Pulumi == nil || db.Pulumi.ID != "user-db-prod" || db.Outputs["port"] != "5432" {
		t.Errorf("database result = %+v, want its outputs and urn/id", db)
	}
	api := got[1]
	if !errors.Is(api.Err, context.Canceled) {
		t.Errorf("api err = %v, want context.Canceled", api.Err)
	}
	if api.Pulumi == nil || len(api.Pulumi.URNs) != 2 {
		t.Errorf("api pulumi = %+v, want the URNs of the children Pulumi did create", api.Pulumi)
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
