package metrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/guard"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// checkEMF validates one line against the CloudWatch Embedded Metric Format
// specification's requirements ("Specification: Embedded metric format",
// Amazon CloudWatch User Guide) and returns its root object.
func checkEMF(t *testing.T, line []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, line)
	}
	if dec.More() {
		t.Fatalf("data after the JSON object: %s", line)
	}
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		t.Fatalf("root has no _aws object: %s", line)
	}
	onlyKeys(t, "_aws", aws, "Timestamp", "CloudWatchMetrics")
	ts, ok := aws["Timestamp"].(json.Number)
	if _, err := ts.Int64(); !ok || err != nil {
		t.Fatalf("_aws.Timestamp is not an integer of milliseconds: %v", aws["Timestamp"])
	}
	dirs, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(dirs) == 0 {
		t.Fatalf("_aws.CloudWatchMetrics is not a non-empty array: %s", line)
	}
	for _, d := range dirs {
		dir, ok := d.(map[string]any)
		if !ok {
			t.Fatalf("MetricDirective is not an object: %v", d)
		}
		onlyKeys(t, "MetricDirective", dir, "Namespace", "Dimensions", "Metrics")
		ns, _ := dir["Namespace"].(string)
		if ns == "" || len(ns) > 255 {
			t.Fatalf("Namespace %q: want 1 to 255 characters", ns)
		}
		sets, ok := dir["Dimensions"].([]any)
		if !ok {
			t.Fatalf("Dimensions is not an array: %v", dir["Dimensions"])
		}
		for _, s := range sets {
			set, ok := s.([]any)
			if !ok || len(set) > 30 {
				t.Fatalf("DimensionSet %v: want an array of at most 30 keys", s)
			}
			for _, k := range set {
				name, _ := k.(string)
				if v, ok := root[name].(string); !ok || v == "" {
					t.Fatalf("dimension %q has no non-empty string member at the root: %s", name, line)
				}
			}
		}
		defs, ok := dir["Metrics"].([]any)
		if !ok || len(defs) == 0 || len(defs) > 100 {
			t.Fatalf("Metrics: want 1 to 100 MetricDefinitions: %v", dir["Metrics"])
		}
		for _, m := range defs {
			def, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("MetricDefinition is not an object: %v", m)
			}
			onlyKeys(t, "MetricDefinition", def, "Name", "Unit", "StorageResolution")
			name, _ := def["Name"].(string)
			if name == "" || len(name) > 1024 {
				t.Fatalf("MetricDefinition Name %q: want 1 to 1024 characters", name)
			}
			switch def["Unit"] {
			case "Seconds", "Milliseconds", "Count":
			default:
				t.Fatalf("MetricDefinition %s: unit %v is not a CloudWatch unit deployer uses", name, def["Unit"])
			}
			if _, ok := root[name].(json.Number); !ok {
				t.Fatalf("metric %q has no number member at the root: %s", name, line)
			}
		}
	}
	return root
}

func onlyKeys(t *testing.T, what string, m map[string]any, allowed ...string) {
	t.Helper()
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			t.Fatalf("%s has a member the specification does not define: %q", what, k)
		}
	}
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestEMFLinesFollowTheSpecification(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	now := time.Date(2026, 1, 15, 14, 20, 0, 0, time.UTC)
	r, err := New(context.Background(), Options{Getenv: func(string) string { return "" }, EMFPath: path, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	key := "stack:user-platform:env:production"
	r.LockAcquired(key, 1500*time.Microsecond, nil)
	r.LockAcquired("stack:user-platform:env:production:service:api", 2*time.Second, errors.New("held"))
	r.LockHeartbeat(key, nil)
	r.LockHeartbeat(key, errors.New("gone"))
	r.StaleDetected("stack:user-platform:env:production:component:api/db")
	r.LockReleased(key, 90*time.Second)
	r.DeploymentFinished(core.Finished{LockKey: key, Operation: "deploy", Status: statestore.DeploymentFailed, Duration: 42 * time.Second,
		Summary: deploy.Summary{Created: 1, Failed: []engine.Result{{Address: "api/db", Status: engine.StatusFailed}}, NotStarted: 2}})
	r.LockAcquired("custom:nightly-backup", time.Millisecond, nil)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	lines := readLines(t, path)
	type got struct {
		Metrics map[string]any
		Dims    map[string]string
	}
	var all []got
	for _, l := range lines {
		root := checkEMF(t, l)
		aws := root["_aws"].(map[string]any)
		if ts, _ := aws["Timestamp"].(json.Number).Int64(); ts != now.UnixMilli() {
			t.Errorf("Timestamp %d, want %d", ts, now.UnixMilli())
		}
		dir := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
		if dir["Namespace"] != "Deployer" {
			t.Errorf("Namespace %v, want Deployer", dir["Namespace"])
		}
		g := got{Metrics: map[string]any{}, Dims: map[string]string{}}
		for _, m := range dir["Metrics"].([]any) {
			name := m.(map[string]any)["Name"].(string)
			g.Metrics[name+" "+m.(map[string]any)["Unit"].(string)] = root[name].(json.Number).String()
		}
		for _, k := range dir["Dimensions"].([]any)[0].([]any) {
			g.Dims[k.(string)] = root[k.(string)].(string)
		}
		if last := dir["Dimensions"].([]any); len(last) != 2 || len(last[1].([]any)) != 0 {
			t.Errorf("Dimensions %v: want the event's set and the empty set", last)
		}
		all = append(all, g)
	}
	lockDims := map[string]string{"stack": "user-platform", "environment": "production", "lock_level": "stack"}
	want := []got{
		{map[string]any{"deployer.lock.acquisition.duration Milliseconds": "1.5", "deployer.lock.acquisition.success Count": "1"}, lockDims},
		{map[string]any{"deployer.lock.acquisition.duration Milliseconds": "2000", "deployer.lock.acquisition.failure Count": "1"},
			map[string]string{"stack": "user-platform", "environment": "production", "lock_level": "service"}},
		{map[string]any{"deployer.lock.heartbeat.success Count": "1"}, lockDims},
		{map[string]any{"deployer.lock.heartbeat.failure Count": "1"}, lockDims},
		{map[string]any{"deployer.lock.stale.detected Count": "1"},
			map[string]string{"stack": "user-platform", "environment": "production", "lock_level": "component"}},
		{map[string]any{"deployer.lock.held.duration Seconds": "90"}, lockDims},
		{map[string]any{"deployer.deploy.failure Count": "1", "deployer.deploy.duration Seconds": "42",
			"deployer.deploy.components.created Count": "1", "deployer.deploy.components.failed Count": "1",
			"deployer.deploy.components.not_started Count": "2"}, lockDims},
		{map[string]any{"deployer.lock.acquisition.duration Milliseconds": "1", "deployer.lock.acquisition.success Count": "1"},
			map[string]string{"lock_level": "custom"}},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("EMF lines (-want +got):\n%s", diff)
	}
	// The deploy line carries operation and status as properties.
	var dep map[string]any
	_ = json.Unmarshal(lines[6], &dep)
	if dep["operation"] != "deploy" || dep["status"] != "failed" {
		t.Errorf("deploy line properties: operation %v, status %v", dep["operation"], dep["status"])
	}
}

func TestEMFLineBytes(t *testing.T) {
	line := emfLine(time.UnixMilli(1700000000123), lockDims("stack:s:env:e"), nil,
		[]emfValue{{LockAcquisitionDuration, unitMilliseconds, 12.5}, {LockAcquisitionSuccess, unitCount, 1}})
	want := `{"_aws":{"Timestamp":1700000000123,"CloudWatchMetrics":[{"Namespace":"Deployer","Dimensions":[["stack","environment","lock_level"],[]],` +
		`"Metrics":[{"Name":"deployer.lock.acquisition.duration","Unit":"Milliseconds"},{"Name":"deployer.lock.acquisition.success","Unit":"Count"}]}]},` +
		`"stack":"s","environment":"e","lock_level":"stack","deployer.lock.acquisition.duration":12.5,"deployer.lock.acquisition.success":1}` + "\n"
	if diff := cmp.Diff(want, string(line)); diff != "" {
		t.Errorf("EMF line (-want +got):\n%s", diff)
	}
}

func TestEMFFileThatCannotBeOpenedIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "m.jsonl")
	r, err := New(context.Background(), Options{Getenv: func(string) string { return "" }, EMFPath: path})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("DEPLOYER_METRICS_EMF")) {
		t.Fatalf("New: %v, want an error naming DEPLOYER_METRICS_EMF", err)
	}
	r.LockAcquired("stack:s:env:e", time.Millisecond, nil) // still usable
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A guard decision is one EMF line with the decision's counter and, for a
// decision that took the lock, its retries and wait, under the resource
// and app dimensions (docs/guard.md#audit-events-and-counters).
func TestEMFGuardDecisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	r, err := New(context.Background(), Options{Getenv: func(string) string { return "" }, EMFPath: path})
	if err != nil {
		t.Fatal(err)
	}
	r.GuardDecided(&guard.Result{Resource: "orders-db", As: "app-a", Decision: guard.SkippedLock,
		Lock: &guard.LockInfo{Retries: 3, WaitSeconds: 1.25}})
	r.GuardDecided(&guard.Result{Resource: "orders-db", As: "app-a", Decision: guard.DedicatedStopped})
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, l := range readLines(t, path) {
		root := checkEMF(t, l)
		delete(root, "_aws")
		got = append(got, root)
	}
	want := []map[string]any{
		{"resource": "orders-db", "app": "app-a", "deployer.guard.stop.skipped_lock": json.Number("1"),
			"deployer.guard.lock.acquire.retries": json.Number("3"), "deployer.guard.lock.acquire.duration_ms": json.Number("1250")},
		{"resource": "orders-db", "app": "app-a", "deployer.guard.stop.dedicated_stopped": json.Number("1")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guard EMF lines (-want +got):\n%s", diff)
	}
}
