// Package testenv gives tests the addresses of the real servers that
// scripts/test.sh starts (docs/backends.md). A missing server fails the test in CI
// (CI=true) and skips it, with the reason, elsewhere.
package testenv

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Variables set by scripts/test.sh.
const (
	DynamoDBEndpoint = "DEPLOYER_TEST_DYNAMODB_ENDPOINT" // http://127.0.0.1:PORT (dynalite)
	S3Endpoint       = "DEPLOYER_TEST_S3_ENDPOINT"       // http://127.0.0.1:PORT (MinIO)
	RedisURL         = "DEPLOYER_TEST_REDIS_URL"         // redis://127.0.0.1:PORT/0
	PostgresURL      = "DEPLOYER_TEST_POSTGRES_URL"      // postgres://user@127.0.0.1:PORT/db?sslmode=disable
	// A PostgreSQL server of its own that a test may restart
	// (scripts/test-servers/selfhosted.sh): its URL and the shell command
	// that restarts it (pg_ctl restart -m fast).
	PostgresRestartURL = "DEPLOYER_TEST_POSTGRES_RESTART_URL"
	PostgresRestartCmd = "DEPLOYER_TEST_POSTGRES_RESTART_CMD"
	// RedisServer is the redis-server binary: Redis Sentinel and Cluster
	// tests start their own servers with it.
	RedisServer = "DEPLOYER_TEST_REDIS_SERVER"
	// OpenTelemetry Collector (scripts/test-servers/otelcol.sh).
	OTLPEndpoint     = "DEPLOYER_TEST_OTLP_ENDPOINT"      // http://127.0.0.1:PORT (OTLP/HTTP)
	OTLPGRPCEndpoint = "DEPLOYER_TEST_OTLP_GRPC_ENDPOINT" // http://127.0.0.1:PORT (OTLP/gRPC)
	OTelColLog       = "DEPLOYER_TEST_OTELCOL_LOG"        // the collector's log (debug exporter output)
	// local-kms, a KMS API (scripts/test-servers/kms.sh): region us-east-1,
	// any credentials.
	KMSEndpoint = "DEPLOYER_TEST_KMS_ENDPOINT" // http://127.0.0.1:PORT
)

// Tools installed by scripts/test-servers/ghtools.sh: their paths.
const (
	Actionlint = "DEPLOYER_TEST_ACTIONLINT"
	Goreleaser = "DEPLOYER_TEST_GORELEASER"
	Act        = "DEPLOYER_TEST_ACT"
	Cosign     = "DEPLOYER_TEST_COSIGN"
	// Chromium is Debian's chromium, installed by
	// scripts/test-servers/chromium.sh, for the browser tests of deployer ui.
	Chromium = "DEPLOYER_TEST_CHROMIUM"
)

// InCI reports whether the tests run in CI, where a missing server is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require returns the value of the environment variable naming a test server.
// When it is empty the test fails in CI and is skipped elsewhere, naming what
// to run.
func Require(t testing.TB, variable, server string) string {
	t.Helper()
	v := os.Getenv(variable)
	if v != "" {
		return v
	}
	msg := server + " is not running: " + variable + " is unset (run `make test`, which starts it)"
	if InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// RequirePlatform skips t, with why, unless ok (the platform can run it):
// elsewhere a skip, in CI a failure, because CI runs on Linux
// (.github/workflows/ci.yml, .ci/run) where every test must run.
func RequirePlatform(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if InCI() {
		t.Fatal(why + " (CI=true: CI's platform must run every test)")
	}
	t.Skip(why)
}

// ClosedAddr returns "127.0.0.1:PORT" of a port that was free a moment ago and
// that nothing listens on: a server that is down, for connection errors.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Variables set by scripts/test-servers/pulumi.sh.
const (
	PulumiCLI     = "DEPLOYER_TEST_PULUMI"         // path of the Pulumi CLI built into .tools
	PulumiPlugins = "DEPLOYER_TEST_PULUMI_PLUGINS" // directory holding pulumi-resource-deployertest
)

// Pulumi returns the Pulumi CLI's path and the directory of the test
// provider that scripts/test-servers/pulumi.sh built, and puts both first
// on the test's PATH (Pulumi runs pulumi-resource-NAME from PATH). A fresh
// PULUMI_HOME keeps the user's plugins and credentials out of the test.
// When they are missing the test fails in CI and is skipped elsewhere.
func Pulumi(t testing.TB) (cli, plugins string) {
	t.Helper()
	cli = Require(t, PulumiCLI, "the Pulumi CLI")
	plugins = Require(t, PulumiPlugins, "the test provider pulumi-resource-deployertest")
	t.Setenv("PATH", filepath.Dir(cli)+string(os.PathListSeparator)+plugins+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PULUMI_HOME", filepath.Join(t.TempDir(), "pulumi-home"))
	t.Setenv("PULUMI_SKIP_UPDATE_CHECK", "true")
	return cli, plugins
}

// SyncBuffer is a bytes.Buffer safe to read (String) while another
// goroutine or a process's copy goroutine writes it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
