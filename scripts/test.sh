#!/usr/bin/env bash
# The test command of the README (`make test`): installs what is missing,
# starts dynalite, MinIO, redis-server, PostgreSQL, an OpenTelemetry
# Collector and local-kms (a KMS API) on loopback with throwaway data, builds the Pulumi CLI (once) and
# the test provider, runs gofmt, go vet and `go test -race ./...` against them
# (the real-CLI Pulumi tests verbosely), and stops them. In CI (CI=true) a
# server that cannot start fails the run;
# elsewhere the tests that need it skip, printing why.
# `scripts/test.sh bench` runs the benchmarks against the same servers
# (BENCH=regexp picks some: BENCH=PulumiSideBySide);
# `scripts/test.sh go test -run X ./pkg/` runs one command against them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export DEPLOYER_TOOLS="$ROOT/.tools"
mkdir -p "$DEPLOYER_TOOLS"
export DEPLOYER_TEST_TMP
DEPLOYER_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/deployer-test.XXXXXX")
chmod 755 "$DEPLOYER_TEST_TMP"

stops=()
cleanup() {
	local s
	for s in "${stops[@]}"; do declare -F "$s" >/dev/null && { "$s" || true; }; done
	rm -rf "$DEPLOYER_TEST_TMP"
}
trap cleanup EXIT

# Each script starts its servers when sourced and exits non-zero in CI when
# one cannot start; outside CI a failure only means those tests skip.
stops+=(aws_servers_stop)
source scripts/test-servers/aws.sh || true
stops+=(selfhosted_servers_stop)
source scripts/test-servers/selfhosted.sh || true
stops+=(otelcol_stop)
source scripts/test-servers/otelcol.sh || true
stops+=(kms_stop)
source scripts/test-servers/kms.sh || true
# actionlint, goreleaser, act and cosign (the release, signature and act workflow tests).
source scripts/test-servers/ghtools.sh || true
# The Pulumi CLI (built once into .tools) and the test provider, on PATH.
source scripts/test-servers/pulumi.sh || true

if [ "${1:-}" = "go" ]; then
	"$@"
	exit $?
fi

if [ "${1:-}" = "bench" ]; then
	go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${BENCHTIME:-2s}" -timeout 2h ./...
	exit 0
fi

echo "== gofmt / go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
go vet ./...

# The release (.goreleaser.yaml) ships Linux, macOS and Windows binaries: the
# Unix-only code (process groups, signals) must stay behind build tags.
# Linux and macOS share the unix build tag; Windows is the other side of it.
echo "== the Windows release target builds"
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -o /dev/null ./cmd/deployer

echo "== go test -race ./..."
# -timeout only turns a hang into a failure: it stands far above what a busy
# 2-core machine needs (internal/e2e took 20 minutes at a load of 10 to 18).
go test -race -count=1 -timeout 45m -skip '^TestRealPulumi' ./...

# The real-CLI Pulumi tests (internal/e2e/pulumi_test.go through the binary,
# and the Pulumi engine's conformance run), verbose so the log shows each one
# running and its duration; one package at a time (-p 1), as each drives
# Pulumi processes of its own.
echo "== real-CLI Pulumi tests"
pulumi_log="$DEPLOYER_TEST_TMP/real-pulumi.log"
if go test -race -count=1 -p 1 -timeout 30m -run '^TestRealPulumi' -v ./internal/engine/pulumi/ ./internal/e2e/ >"$pulumi_log" 2>&1; then
	grep -E '^(=== RUN|--- |ok|PASS)' "$pulumi_log"
else
	cat "$pulumi_log"
	exit 1
fi
