# shellcheck shell=bash
# A real OpenTelemetry Collector for the metrics tests (docs/observability.md).
#
# Source this file from scripts/test.sh; it builds (once, cached under
# the tools cache, otelcol-$OTELCOL_VERSION/) a collector with the OTLP receiver and the
# debug exporter using the collector's builder from the Go module proxy (a few
# minutes cold), starts it on 127.0.0.1 with free ports, and exports:
#   DEPLOYER_TEST_OTLP_ENDPOINT       http://127.0.0.1:PORT (OTLP/HTTP)
#   DEPLOYER_TEST_OTLP_GRPC_ENDPOINT  http://127.0.0.1:PORT (OTLP/gRPC)
#   DEPLOYER_TEST_OTELCOL_LOG         the collector's log, where the debug
#                                     exporter prints every metric it receives
# Call otelcol_stop on exit.
#
# In CI (CI=true) a collector that cannot be built or started exits non-zero;
# elsewhere the reason is printed and the tests that need it skip.
# Set OTELCOL_NO_AUTOSTART=1 to only define the functions.

_otelcol_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# The builder's release; the components in otelcol-builder.yaml match it.
OTELCOL_VERSION=v0.150.0
_otelcol_pid=""
_otelcol_tmp=""

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OTELCOL_TOOLS_DIR="${OTELCOL_TOOLS_DIR:-$(test_tools_dir)}"

_otelcol_log() { echo "test-servers/otelcol: $*" >&2; }

_otelcol_fail() { test_servers_fail _otelcol_log otelcol_stop "the tests that need the collector" "$@"; }

# _otelcol_build builds the collector into $1 (a directory) unless it is there.
_otelcol_build() {
	local dir=$1 bin=$1/otelcol-deployer-test
	test_tools_ok "$bin" && return 0
	command -v go >/dev/null || { _otelcol_fail "go not found: cannot build the OpenTelemetry Collector"; return; }
	_otelcol_log "building the OpenTelemetry Collector $OTELCOL_VERSION into $dir (builder from the Go module proxy; takes a few minutes once)"
	local work
	work=$(mktemp -d "${TMPDIR:-/tmp}/deployer-otelcol-build.XXXXXX")
	GOBIN="$work/bin" go install "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" >&2 ||
		{ rm -rf "$work"; _otelcol_fail "go install go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION failed"; return; }
	sed "s#^dist:#dist:\n  output_path: $work/src#" "$_otelcol_root/scripts/test-servers/otelcol-builder.yaml" >"$work/builder.yaml"
	if ! "$work/bin/builder" --config "$work/builder.yaml" >"$work/build.log" 2>&1; then
		_otelcol_log "$(tail -20 "$work/build.log")"
		rm -rf "$work"
		_otelcol_fail "the collector builder failed (log above)"
		return
	fi
	test_tools_publish "$bin" "$work/src/otelcol-deployer-test"
	rm -rf "$work"
}

# otelcol_start builds (once) and starts the collector.
otelcol_start() {
	local dir="$OTELCOL_TOOLS_DIR/otelcol-$OTELCOL_VERSION"
	test_phase "build the OpenTelemetry Collector (when missing)" _otelcol_build "$dir" || return
	_otelcol_tmp=$(mktemp -d "${TMPDIR:-/tmp}/deployer-otelcol.XXXXXX")
	local hport gport
	hport=$(test_servers_free_port) && gport=$(test_servers_free_port) || { _otelcol_fail "no free port for the collector"; return; }
	# The collector's own telemetry is off so it binds no fixed port (8888).
	cat >"$_otelcol_tmp/config.yaml" <<YAML
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:$hport"}
      grpc: {endpoint: "127.0.0.1:$gport"}
exporters:
  debug: {verbosity: detailed}
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    metrics: {receivers: [otlp], exporters: [debug]}
YAML
	"$dir/otelcol-deployer-test" --config "$_otelcol_tmp/config.yaml" >"$_otelcol_tmp/otelcol.log" 2>&1 &
	_otelcol_pid=$!
	local deadline=$((SECONDS + 30))
	until curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$hport/v1/metrics"; do
		if [ $SECONDS -ge $deadline ] || ! kill -0 "$_otelcol_pid" 2>/dev/null; then
			_otelcol_fail "the collector did not start on 127.0.0.1:$hport: $(tail -5 "$_otelcol_tmp/otelcol.log")"
			return
		fi
		sleep 0.2
	done
	export DEPLOYER_TEST_OTLP_ENDPOINT="http://127.0.0.1:$hport"
	export DEPLOYER_TEST_OTLP_GRPC_ENDPOINT="http://127.0.0.1:$gport"
	export DEPLOYER_TEST_OTELCOL_LOG="$_otelcol_tmp/otelcol.log"
	_otelcol_log "collector on $DEPLOYER_TEST_OTLP_ENDPOINT (gRPC $DEPLOYER_TEST_OTLP_GRPC_ENDPOINT), log $DEPLOYER_TEST_OTELCOL_LOG"
}

# otelcol_stop stops the collector and removes its files.
otelcol_stop() {
	if [ -n "$_otelcol_pid" ]; then
		{ kill "$_otelcol_pid" 2>/dev/null && wait "$_otelcol_pid" 2>/dev/null; } || true
		_otelcol_pid=""
	fi
	if [ -n "$_otelcol_tmp" ]; then
		rm -rf "$_otelcol_tmp"
		_otelcol_tmp=""
	fi
	unset DEPLOYER_TEST_OTLP_ENDPOINT DEPLOYER_TEST_OTLP_GRPC_ENDPOINT DEPLOYER_TEST_OTELCOL_LOG
}

if [ "${OTELCOL_NO_AUTOSTART:-}" != "1" ]; then
	otelcol_start || true
fi
