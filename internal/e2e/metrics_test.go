//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// DEPLOYER_METRICS_EMF=m.jsonl deployer deploy writes EMF lines in the
// Deployer namespace with the lock acquisition duration and the
// stack/environment/lock_level dimensions (docs/observability.md).
func TestDeployWritesEMFMetrics(t *testing.T) {
	p := copyQuickstart(t)
	p.env = []string{"DEPLOYER_METRICS_EMF=m.jsonl"}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	type directive struct {
		Namespace  string
		Dimensions [][]string
		Metrics    []struct{ Name, Unit string }
	}
	found := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(p.read("m.jsonl")))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Bytes())
		}
		var aws struct{ CloudWatchMetrics []directive }
		raw, _ := json.Marshal(line["_aws"])
		_ = json.Unmarshal(raw, &aws)
		if len(aws.CloudWatchMetrics) == 0 || aws.CloudWatchMetrics[0].Namespace != "Deployer" {
			t.Fatalf("_aws.CloudWatchMetrics[0].Namespace is not Deployer: %s", sc.Bytes())
		}
		d := aws.CloudWatchMetrics[0]
		if strings.Join(d.Dimensions[0], ",") != "stack,environment,lock_level" ||
			line["stack"] != "quickstart" || line["environment"] != "dev" || line["lock_level"] != "stack" {
			t.Errorf("dimensions: %s", sc.Bytes())
		}
		for _, m := range d.Metrics {
			if _, ok := line[m.Name].(float64); !ok {
				t.Errorf("metric %s has no value: %s", m.Name, sc.Bytes())
			}
			found[m.Name] = true
		}
	}
	for _, name := range []string{"deployer.lock.acquisition.duration", "deployer.lock.acquisition.success",
		"deployer.lock.held.duration", "deployer.deploy.success", "deployer.deploy.duration"} {
		if !found[name] {
			t.Errorf("no EMF line with %s", name)
		}
	}
}

// A deploy with OTEL_EXPORTER_OTLP_ENDPOINT pointing at the test collector
// delivers the lock metrics to it before deployer exits.
func TestDeploySendsLockMetricsToTheCollector(t *testing.T) {
	endpoint := testenv.Require(t, testenv.OTLPEndpoint, "the OpenTelemetry Collector")
	logPath := testenv.Require(t, testenv.OTelColLog, "the OpenTelemetry Collector")
	var b [4]byte
	_, _ = rand.Read(b[:])
	stack := "otlp-e2e-" + hex.EncodeToString(b[:])
	p := copyQuickstart(t)
	p.env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="}
	r := p.mustRun(0, "deploy", "-s", stack, "-e", "dev", "--yes")
	if strings.Contains(r.stderr, "Warning: metrics") {
		t.Fatalf("metrics export failed:\n%s", r)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, name := range []string{"deployer.lock.acquisition.duration", "deployer.lock.acquisition.success", "deployer.lock.held.duration"} {
		ok := false
		for _, block := range strings.Split(log, "Metric #")[1:] {
			if strings.Contains(block, "-> Name: "+name+"\n") && strings.Contains(block, "-> stack: Str("+stack+")") &&
				strings.Contains(block, "-> environment: Str(dev)") && strings.Contains(block, "-> lock_level: Str(stack)") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the collector did not receive %s with stack %s, environment dev, lock_level stack", name, stack)
		}
	}
}

// guard stop's decisions reach EMF and the collector under the counter
// names of docs/guard.md, with the resource and app as dimensions; a dry
// run counts nothing.
func TestGuardDecisionsAreExportedAsMetrics(t *testing.T) {
	endpoint := testenv.Require(t, testenv.OTLPEndpoint, "the OpenTelemetry Collector")
	logPath := testenv.Require(t, testenv.OTelColLog, "the OpenTelemetry Collector")
	var b [4]byte
	_, _ = rand.Read(b[:])
	app := "app-" + hex.EncodeToString(b[:]) // this run's series only
	other := newStatusServer(t)
	p := guardProject(t, "file", map[string]string{app: other.srv.URL, "b": other.srv.URL})
	p.env = append(p.env, "DEPLOYER_METRICS_EMF=m.jsonl", "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL=", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=")
	p.mustRun(0, "guard", "stop", "db", "--as", app, "--dry-run")
	p.mustRun(0, "guard", "stop", "db", "--as", app) // b is UP: skipped_shared_active
	other.stop()
	r := p.mustRun(0, "guard", "stop", "db", "--as", app) // b is DOWN: stopped
	if strings.Contains(r.stderr, "Warning: metrics") {
		t.Fatalf("metrics export failed:\n%s", r)
	}

	var got []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(p.read("m.jsonl")))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Bytes())
		}
		if line["resource"] == "db" && line["app"] == app {
			got = append(got, line)
		}
	}
	if len(got) != 2 || got[0]["deployer.guard.stop.skipped_shared_active"] != 1.0 || got[1]["deployer.guard.stop.stopped"] != 1.0 ||
		got[1]["deployer.guard.lock.acquire.retries"] != 0.0 || got[1]["deployer.guard.lock.acquire.duration_ms"] == nil {
		t.Fatalf("EMF guard lines: want skipped_shared_active then stopped (the dry run uncounted), got %v", got)
	}

	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deployer.guard.stop.skipped_shared_active", "deployer.guard.stop.stopped",
		"deployer.guard.lock.acquire.retries", "deployer.guard.lock.acquire.duration_ms"} {
		ok := false
		for _, block := range strings.Split(string(data), "Metric #")[1:] {
			if strings.Contains(block, "-> Name: "+name+"\n") && strings.Contains(block, "-> app: Str("+app+")") &&
				strings.Contains(block, "-> resource: Str(db)") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the collector did not receive %s with resource db, app %s", name, app)
		}
	}
}
