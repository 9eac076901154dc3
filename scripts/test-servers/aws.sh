# shellcheck shell=bash
# Local AWS API servers for the tests of the AWS backends (docs/aws.md#local-servers-development-and-tests).
#
# Source this file from scripts/test.sh; it installs (once, cached under
# the machine's tools cache, lib.sh test_tools_dir) and starts on 127.0.0.1,
# with free ports and throwaway data:
#   dynalite (DynamoDB API, npm, in memory)   -> DEPLOYER_TEST_DYNAMODB_ENDPOINT
#   MinIO    (S3 API, go install, with a KMS key so SSE works) -> DEPLOYER_TEST_S3_ENDPOINT
# and exports AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION for them.
# Call aws_servers_stop on exit (e.g. trap aws_servers_stop EXIT).
#
# In CI (CI=true) a server that cannot be installed or started exits non-zero;
# elsewhere the reason is printed and the tests that need it skip.
# Set AWS_SERVERS_NO_AUTOSTART=1 to only define the functions.

_aws_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# MinIO is pinned (the newest module version on the day it was chosen); a new
# pin installs beside the old one instead of reusing it.
AWS_MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
_aws_pids=()
_aws_logs=() # the log of each server in _aws_pids, in the same order
_aws_tmp=""

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
AWS_TOOLS_DIR="${AWS_TOOLS_DIR:-$(test_tools_dir)}"
# dynalite is pinned to its major version; a new major installs beside it.
AWS_DYNALITE_VERSION=4

_aws_log() { echo "test-servers/aws: $*" >&2; }

_aws_fail() { test_servers_fail _aws_log aws_servers_stop "the tests that need this server" "$@"; }

# _aws_wait URL SECONDS: until URL answers HTTP (any status) or time runs out.
_aws_wait() {
	local url=$1 deadline=$((SECONDS + $2))
	while [ $SECONDS -lt $deadline ]; do
		if curl -s -o /dev/null --max-time 1 "$url"; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

_aws_start_dynalite() {
	local dir="$AWS_TOOLS_DIR/dynalite-$AWS_DYNALITE_VERSION"
	local cli="$dir/node_modules/dynalite/cli.js"
	if [ ! -f "$dir/.installed" ]; then
		command -v npm >/dev/null || { _aws_fail "npm not found: install Node.js to run dynalite"; return; }
		_aws_log "installing dynalite@^$AWS_DYNALITE_VERSION into $dir"
		local work
		work=$(mktemp -d "${TMPDIR:-/tmp}/deployer-dynalite.XXXXXX")
		test_phase "install dynalite" npm install --silent --no-audit --no-fund --prefix "$work" "dynalite@^$AWS_DYNALITE_VERSION" >&2 ||
			{ rm -rf "$work"; _aws_fail "npm install dynalite failed"; return; }
		touch "$work/.installed"
		mkdir -p "$AWS_TOOLS_DIR"
		# Another run may have installed it meanwhile: keep the first whole one.
		chmod 755 "$work"
		mv -T "$work" "$dir" 2>/dev/null || rm -rf "$work"
	fi
	local port
	port=$(test_servers_free_port) || { _aws_fail "no free port for dynalite"; return; }
	# dynalite.js keeps the server up when a client aborts a request (see there).
	node "$_aws_root/scripts/test-servers/dynalite.js" "$cli" --host 127.0.0.1 --port "$port" >"$_aws_tmp/dynalite.log" 2>&1 &
	_aws_pids+=($!)
	_aws_logs+=("$_aws_tmp/dynalite.log")
	if ! _aws_wait "http://127.0.0.1:$port/" 30; then
		_aws_fail "dynalite did not start on 127.0.0.1:$port: $(tail -5 "$_aws_tmp/dynalite.log")"
		return
	fi
	export DEPLOYER_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
	_aws_log "dynalite on $DEPLOYER_TEST_DYNAMODB_ENDPOINT"
}

_aws_start_minio() {
	local bin="$AWS_TOOLS_DIR/minio-$AWS_MINIO_VERSION/minio"
	test_tools_ensure _aws_log _aws_fail MinIO "$bin" "github.com/minio/minio@$AWS_MINIO_VERSION" || return
	local port cport
	port=$(test_servers_free_port) && cport=$(test_servers_free_port) || { _aws_fail "no free port for MinIO"; return; }
	mkdir -p "$_aws_tmp/minio-data"
	MINIO_ROOT_USER=minioadmin MINIO_ROOT_PASSWORD=minioadmin \
		MINIO_KMS_SECRET_KEY="deployer-test-key:$(head -c 32 /dev/urandom | base64)" \
		MINIO_BROWSER=off \
		"$bin" server --quiet --address "127.0.0.1:$port" --console-address "127.0.0.1:$cport" \
		"$_aws_tmp/minio-data" >"$_aws_tmp/minio.log" 2>&1 &
	_aws_pids+=($!)
	_aws_logs+=("$_aws_tmp/minio.log")
	local deadline=$((SECONDS + 60))
	until curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/minio/health/live"; do
		if [ $SECONDS -ge $deadline ]; then
			_aws_fail "MinIO did not become healthy on 127.0.0.1:$port: $(tail -5 "$_aws_tmp/minio.log")"
			return
		fi
		sleep 0.2
	done
	export DEPLOYER_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
	_aws_log "MinIO on $DEPLOYER_TEST_S3_ENDPOINT"
}

# aws_servers_start starts both servers and exports their settings.
aws_servers_start() {
	_aws_tmp=$(mktemp -d "${TMPDIR:-/tmp}/deployer-aws.XXXXXX")
	export AWS_ACCESS_KEY_ID=minioadmin AWS_SECRET_ACCESS_KEY=minioadmin AWS_REGION=us-east-1
	# Keep a developer's real AWS profile out of the tests.
	unset AWS_PROFILE AWS_SESSION_TOKEN
	_aws_start_dynalite || true
	_aws_start_minio || true
}

# aws_servers_stop stops what aws_servers_start started and removes its data.
aws_servers_stop() {
	local i pid
	for i in "${!_aws_pids[@]}"; do
		pid=${_aws_pids[$i]}
		# A server that ended before the run did failed the tests after it:
		# its log says why, and goes with the throwaway data below.
		if ! kill -0 "$pid" 2>/dev/null; then
			_aws_log "error: the server of ${_aws_logs[$i]##*/} (pid $pid) ended before the tests did; the end of its log:"
			tail -20 "${_aws_logs[$i]}" >&2 || true
		fi
		{ kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; } || true # a killed server exits non-zero; set -e must not stop the cleanup
	done
	_aws_pids=()
	_aws_logs=()
	if [ -n "$_aws_tmp" ]; then
		rm -rf "$_aws_tmp"
		_aws_tmp=""
	fi
	unset DEPLOYER_TEST_DYNAMODB_ENDPOINT DEPLOYER_TEST_S3_ENDPOINT
}

if [ "${AWS_SERVERS_NO_AUTOSTART:-}" != "1" ]; then
	aws_servers_start
fi
