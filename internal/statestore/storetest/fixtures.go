package storetest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// n is a JSON number as Decode returns it.
func n(s string) json.Number { return json.Number(s) }

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func tp(s string) *time.Time { t := ts(s); return &t }
func sp(s string) *string    { return &s }

// SeedState returns the example state of docs/state-format.md#example for stack/env with every
// field of the model populated (lock held, serial 1, a fresh lineage), plus
// values that break naive encoders: integers beyond 2^53 and 2^64, floats
// with exponents and trailing zeros, HTML characters, non-ASCII text and
// U+2028. Numbers inside maps are json.Number, as Decode returns them, so a
// loaded state compares equal with go-cmp.
func SeedState(stack, env string) *statestore.State {
	st := statestore.NewState(stack, env)
	st.Serial = 1
	st.Metadata = statestore.Metadata{
		Stack: stack, Environment: env,
		LastUpdated: ts("2024-01-15T14:20:00Z"), LastUpdatedBy: "github-actions-run-12345",
		DeploymentID: "dep-abc123def456", GitCommit: "a1b2c3d4e5f6", GitBranch: "main", Fence: 42,
	}
	st.Lock = statestore.LockInfo{Locked: true, LockID: sp("550e8400-e29b-41d4-a716-446655440000"),
		LockedBy: sp("github-actions-run-12345"), LockedAt: tp("2024-01-15T14:00:00Z"), ExpiresAt: tp("2024-01-15T15:00:00Z")}
	st.Resources = map[string]*statestore.Resource{
		"user-service/database": {
			Kind: "RDS", APIVersion: statestore.APIVersion, Status: "ready",
			Lifecycle: statestore.Lifecycle{CreatedAt: ts("2024-01-10T10:00:00Z"), LastUpdated: ts("2024-01-15T14:20:00Z"), Version: 5},
			DesiredConfig: map[string]any{
				"engine":   map[string]any{"type": "postgres", "version": "15.4"},
				"instance": map[string]any{"class": "db.r6g.xlarge", "storage": map[string]any{"allocatedGB": n("100"), "type": "gp3"}},
				"limits": map[string]any{
					"maxBytes": n("18446744073709551616"), "iops": n("9007199254740993"), "ratio": n("0.1"),
					"tiny": n("1e-7"), "price": n("12.50"), "negative": n("-3"), "big": n("1.7976931348623157e308"),
				},
				"tags":  []any{"team:<users & auth>", "café", "line\u2028sep", n("7"), true, nil},
				"empty": map[string]any{}, "none": nil, "list": []any{},
			},
			ActualState: map[string]any{
				"instance_id": "user-db-prod", "endpoint": "user-db-prod.abc123.us-east-1.rds.amazonaws.com",
				"port": n("5432"), "status": "available", "engine": "postgres", "engine_version": "15.4",
				"instance_class": "db.r6g.xlarge", "allocated_storage": n("100"), "multi_az": true,
			},
			Outputs: map[string]any{
				"endpoint": "user-db-prod.abc123.us-east-1.rds.amazonaws.com", "port": "5432",
				"reader_endpoint": "user-db-prod-ro.abc123.us-east-1.rds.amazonaws.com",
			},
			EngineData:   statestore.EngineData(`{"urn":"urn:pulumi:production::user-platform::aws:rds/instance:Instance::user-service-database","id":"user-db-prod"}`),
			Dependencies: []string{},
			Health:       &statestore.Health{Status: "healthy", LastCheck: tp("2024-01-15T14:30:00Z")},
		},
		"user-service/api": {
			Kind: "MicroService", APIVersion: statestore.APIVersion, Status: "ready",
			Lifecycle: statestore.Lifecycle{CreatedAt: ts("2024-01-10T10:10:00Z"), LastUpdated: ts("2024-01-15T14:20:00Z"), Version: 8},
			DesiredConfig: map[string]any{
				"image":     map[string]any{"repository": "123456789012.dkr.ecr.us-east-1.amazonaws.com/user-api", "tag": "v1.2.3"},
				"resources": map[string]any{"cpu": n("1024"), "memory": n("2048")},
				"scaling":   map[string]any{"minReplicas": n("5"), "maxReplicas": n("50")},
			},
			ActualState: map[string]any{
				"service_arn":     "arn:aws:ecs:us-east-1:123456789012:service/user-platform-prod/user-api",
				"task_definition": "user-api-prod:15", "desired_count": n("5"), "running_count": n("5"), "pending_count": n("0"),
				"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/user-api:v1.2.3",
			},
			Outputs: map[string]any{"url": "http://user-api.user-platform.local:8080", "loadBalancerUrl": "https://api.company.com"},
			EngineData: statestore.EngineData(`{"urns":["urn:pulumi:production::user-platform::aws:ecs/service:Service::user-api",` +
				`"urn:pulumi:production::user-platform::aws:ecs/taskDefinition:TaskDefinition::user-api"]}`),
			Dependencies: []string{"user-service/database", "user-service/cache"},
			Health: &statestore.Health{Status: "healthy", LastCheck: tp("2024-01-15T14:30:20Z"), Checks: map[string]statestore.HealthCheck{
				"readiness": {Status: "passing", LastCheck: tp("2024-01-15T14:30:15Z")},
				"liveness":  {Status: "passing", LastCheck: tp("2024-01-15T14:30:20Z")},
			}},
			Deployment: &statestore.ResourceDeployment{LastDeploymentID: "dep-abc123def456", LastDeploymentAt: ts("2024-01-15T14:20:00Z"),
				LastDeploymentDurationSeconds: 342.125, RolloutStatus: "completed"},
		},
	}
	st.Outputs = map[string]any{
		"userServiceApiUrl": "https://api.company.com/users", "replicas": n("5"),
		"nested": map[string]any{"weights": []any{n("0.25"), n("0.75")}},
	}
	st.DeploymentHistory = []statestore.Deployment{
		{DeploymentID: "dep-abc123def456", Type: "restore", Timestamp: ts("2024-01-15T14:20:00Z"), TriggeredBy: "github-actions-run-12345",
			GitCommit: "a1b2c3d4e5f6", Version: "v1.2.3", Status: "failed", DurationSeconds: 342.5,
			ResourcesChanged: statestore.ResourcesChanged{Created: 1, Updated: 3, Deleted: 2},
			Serial:           1, RestoredFrom: 7, Scope: "stack:" + stack + ":env:" + env, Error: "user-service/api: exit status 1"},
		{DeploymentID: "dep-xyz789abc123", Type: "deploy", Timestamp: ts("2024-01-14T10:15:00Z"), TriggeredBy: "alice@laptop",
			GitCommit: "b2c3d4e5f6a7", Version: "v1.2.2", Status: "success", DurationSeconds: 318,
			ResourcesChanged: statestore.ResourcesChanged{Updated: 1}},
	}
	return st
}

// LargeState returns a state of n resources for stack/env (serial 1), each
// shaped like the example's MicroService entry (about 1.5 KB of JSON each, so
// 10,000 resources make a document of about 15 MB: docs/backends.md#performance-make-bench).
func LargeState(stack, env string, n int) *statestore.State {
	st := statestore.NewState(stack, env)
	st.Serial = 1
	at := ts("2024-01-15T14:20:00Z")
	st.Metadata.LastUpdated, st.Metadata.DeploymentID = at, "dep-large"
	for i := range n {
		svc, comp := fmt.Sprintf("service-%04d", i/4), fmt.Sprintf("component-%d", i%4)
		name := svc + "-" + comp
		num := func(v int) json.Number { return json.Number(fmt.Sprint(v)) }
		st.Resources[svc+"/"+comp] = &statestore.Resource{
			Kind: "MicroService", APIVersion: statestore.APIVersion, Status: "ready",
			Lifecycle: statestore.Lifecycle{CreatedAt: at, LastUpdated: at, Version: i%9 + 1},
			DesiredConfig: map[string]any{
				"image":     map[string]any{"repository": "123456789012.dkr.ecr.us-east-1.amazonaws.com/" + name, "tag": fmt.Sprintf("v1.%d.%d", i%7, i%13)},
				"resources": map[string]any{"cpu": num(256 * (1 + i%4)), "memory": num(512 * (1 + i%8))},
				"scaling":   map[string]any{"minReplicas": num(1 + i%3), "maxReplicas": num(10 + i%40), "targetCPU": json.Number("0.75")},
			},
			ActualState: map[string]any{
				"service_arn":     "arn:aws:ecs:us-east-1:123456789012:service/user-platform-prod/" + name,
				"task_definition": fmt.Sprintf("%s:%d", name, i%50), "desired_count": num(1 + i%3), "running_count": num(1 + i%3),
				"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/" + name + ":v1.2.3",
			},
			Outputs:      map[string]any{"url": "http://" + name + ".user-platform.local:8080"},
			EngineData:   statestore.EngineData(`{"urns":["urn:pulumi:` + env + "::" + stack + "::aws:ecs/service:Service::" + name + `"]}`),
			Dependencies: []string{svc + "/component-0"},
			Health:       &statestore.Health{Status: "healthy", LastCheck: &at},
			Deployment: &statestore.ResourceDeployment{LastDeploymentID: "dep-large", LastDeploymentAt: at,
				LastDeploymentDurationSeconds: float64(i%600) + 0.5, RolloutStatus: "completed"},
		}
	}
	st.Outputs["count"] = json.Number(fmt.Sprint(n))
	return st
}
