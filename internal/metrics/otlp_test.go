package metrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/testenv"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestOTLPEnabled(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := OTLPEnabled(envOf(tc.env)); got != tc.want {
			t.Errorf("OTLPEnabled(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestUnknownOTLPProtocolIsAClearError(t *testing.T) {
	r, err := New(context.Background(), Options{Getenv: envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})})
	if err == nil || !strings.Contains(err.Error(), "http/protobuf or grpc") {
		t.Fatalf("New: %v, want an error listing the supported protocols", err)
	}
	r.LockAcquired("stack:s:env:e", time.Millisecond, nil)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The exit of a command is delayed by at most ShutdownTimeout when the
// collector is down: the export's timeout and its retries fit inside it.
func TestShutdownIsBoundedByConfiguration(t *testing.T) {
	if ShutdownTimeout > 2*time.Second {
		t.Errorf("ShutdownTimeout %s: a collector that is down may delay exit by at most 2s", ShutdownTimeout)
	}
	if !exportRetry.Enabled || exportRetry.MaxElapsedTime > ShutdownTimeout || exportRetry.MaxInterval > exportRetry.MaxElapsedTime {
		t.Errorf("export retries (%+v) do not fit in ShutdownTimeout %s", exportRetry, ShutdownTimeout)
	}
}

// A collector that accepts connections but never answers (hung, or a
// firewall that drops packets) ends the final export at the deadline: the
// shutdown reports context.DeadlineExceeded instead of waiting for the
// exporter's default 10 s timeout and its minute of retries.
func TestShutdownGivesUpOnAHungCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // never read, never answered
		}
	}()
	defer func() {
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			r, err := New(context.Background(), Options{Getenv: envOf(map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": proto})})
			if err != nil {
				t.Fatal(err)
			}
			r.LockAcquired("stack:s:env:e", time.Millisecond, nil)
			err = r.Shutdown(context.Background())
			if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(strings.ToLower(err.Error()), "deadline") {
				t.Fatalf("Shutdown: %v, want the deadline of ShutdownTimeout", err)
			}
		})
	}
}

// A closed port fails the export at once (connection refused): no wait.
func TestShutdownWithTheCollectorDown(t *testing.T) {
	r, err := New(context.Background(), Options{Getenv: envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + testenv.ClosedAddr(t)})})
	if err != nil {
		t.Fatal(err)
	}
	r.LockAcquired("stack:s:env:e", time.Millisecond, nil)
	if err := r.Shutdown(context.Background()); err == nil {
		t.Fatal("Shutdown: nil error, want the failed export reported")
	}
}

// TestCollectorReceivesLockMetrics sends the lock metrics to the real
// OpenTelemetry Collector that scripts/test.sh starts, over OTLP/HTTP and
// OTLP/gRPC, and reads them back from its debug exporter's log.
func TestCollectorReceivesLockMetrics(t *testing.T) {
	endpoints := map[string]string{
		"http/protobuf": testenv.Require(t, testenv.OTLPEndpoint, "the OpenTelemetry Collector"),
		"grpc":          testenv.Require(t, testenv.OTLPGRPCEndpoint, "the OpenTelemetry Collector"),
	}
	logPath := testenv.Require(t, testenv.OTelColLog, "the OpenTelemetry Collector")
	for proto, endpoint := range endpoints {
		t.Run(proto, func(t *testing.T) {
			var b [4]byte
			_, _ = rand.Read(b[:])
			stack := "otlp-" + hex.EncodeToString(b[:]) // this run's series only
			r, err := New(context.Background(), Options{Version: "test", Getenv: envOf(map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": proto})})
			if err != nil {
				t.Fatal(err)
			}
			key := "stack:" + stack + ":env:production"
			r.LockAcquired(key, 12*time.Millisecond, nil)
			r.LockAcquired(key+":service:api", time.Second, errors.New("held"))
			r.LockHeartbeat(key, nil)
			r.LockHeartbeat(key, errors.New("lost"))
			r.StaleDetected(key)
			r.LockReleased(key, 3*time.Second)
			r.DeploymentFinished(core.Finished{LockKey: key, Operation: "deploy", Status: statestore.DeploymentSuccess, Duration: 2 * time.Second,
				Summary: deploy.Summary{Created: 2}})
			if err := r.Shutdown(context.Background()); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			// The collector's pipeline has no batching: the debug exporter
			// logged the metrics before it answered the export.
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			got := receivedMetrics(string(data), stack)
			if m := got[DeployComponents].block; !strings.Contains(m, "result: Str(created)") || !strings.Contains(m, "Value: 2") {
				t.Errorf("%s: want 2 with result created:\n%s", DeployComponents, m)
			}
			for _, want := range []struct{ name, unit, level string }{
				{LockAcquisitionDuration, "ms", "stack"},
				{LockAcquisitionSuccess, "{count}", "stack"},
				{LockAcquisitionFailure, "{count}", "service"},
				{LockHeldDuration, "s", "stack"},
				{LockHeartbeatSuccess, "{count}", "stack"},
				{LockHeartbeatFailure, "{count}", "stack"},
				{LockStaleDetected, "{count}", "stack"},
				{DeploySuccess, "{count}", "stack"},
				{DeployDuration, "s", "stack"},
				{DeployComponents, "{count}", "stack"},
			} {
				m, ok := got[want.name]
				if !ok {
					t.Errorf("the collector did not receive %s for stack %s", want.name, stack)
					continue
				}
				if m.unit != want.unit {
					t.Errorf("%s: unit %q, want %q", want.name, m.unit, want.unit)
				}
				for _, attr := range []string{"stack: Str(" + stack + ")", "environment: Str(production)", "lock_level: Str(" + want.level + ")"} {
					if !strings.Contains(m.block, attr) {
						t.Errorf("%s: no data point attribute %q in:\n%s", want.name, attr, m.block)
					}
				}
			}
		})
	}
}

type received struct{ unit, block string }

// receivedMetrics parses the debug exporter's detailed output ("Metric #N",
// "-> Name: ...", "-> Unit: ...", data point attributes "-> key: Str(v)")
// and returns the metrics whose data points carry stack.
func receivedMetrics(log, stack string) map[string]received {
	out := map[string]received{}
	for _, block := range strings.Split(log, "Metric #")[1:] {
		if !strings.Contains(block, "stack: Str("+stack+")") {
			continue
		}
		field := func(name string) string {
			_, rest, ok := strings.Cut(block, "-> "+name+": ")
			if !ok {
				return ""
			}
			v, _, _ := strings.Cut(rest, "\n")
			return strings.TrimSpace(v)
		}
		out[field("Name")] = received{unit: field("Unit"), block: block}
	}
	return out
}
