# shellcheck shell=bash
# A local AWS KMS API for the awskms:// secrets provider tests (docs/secrets.md#providers).
#
# Source this file from scripts/test.sh; it installs (once, cached under
# the tools cache, local-kms-$KMS_LOCAL_VERSION/) local-kms, a KMS API emulator, with
# go install from the Go module proxy, starts it on a free port with
# throwaway data, and exports:
#   DEPLOYER_TEST_KMS_ENDPOINT  http://127.0.0.1:PORT (region us-east-1, account 111122223333)
# The tests create their keys and aliases with the AWS SDK's KMS client.
# Call kms_stop on exit.
#
# In CI (CI=true) a server that cannot be installed or started exits
# non-zero; elsewhere the reason is printed and the tests that need it skip.
# Set KMS_NO_AUTOSTART=1 to only define the functions.

_kms_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# local-kms has no tag the module proxy serves; this pseudo-version is the
# newest commit on the day it was chosen.
KMS_LOCAL_VERSION=v0.0.0-20260228092603-2a5e92d09ab6
_kms_pid=""
_kms_tmp=""

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KMS_TOOLS_DIR="${KMS_TOOLS_DIR:-$(test_tools_dir)}"

_kms_log() { echo "test-servers/kms: $*" >&2; }

_kms_fail() { test_servers_fail _kms_log kms_stop "the awskms tests" "$@"; }

# kms_start installs (once) and starts local-kms.
kms_start() {
	local bin="$KMS_TOOLS_DIR/local-kms-$KMS_LOCAL_VERSION/local-kms"
	test_tools_ensure _kms_log _kms_fail local-kms "$bin" "github.com/nsmithuk/local-kms@$KMS_LOCAL_VERSION" || return
	_kms_tmp=$(mktemp -d "${TMPDIR:-/tmp}/deployer-kms.XXXXXX")
	local port
	port=$(test_servers_free_port) || { _kms_fail "no free port for local-kms"; return; }
	# local-kms binds every interface on PORT (it has no host setting);
	# the tests reach it on loopback. The seed path points at nothing.
	PORT=$port KMS_REGION=us-east-1 KMS_ACCOUNT_ID=111122223333 KMS_DATA_PATH="$_kms_tmp/data" \
		KMS_SEED_PATH="$_kms_tmp/no-seed.yaml" "$bin" >"$_kms_tmp/kms.log" 2>&1 &
	_kms_pid=$!
	local deadline=$((SECONDS + 30))
	until curl -s -o /dev/null --max-time 1 -X POST -H 'X-Amz-Target: TrentService.ListKeys' \
		-H 'Content-Type: application/x-amz-json-1.1' -d '{}' "http://127.0.0.1:$port/"; do
		if [ $SECONDS -ge $deadline ] || ! kill -0 "$_kms_pid" 2>/dev/null; then
			_kms_fail "local-kms did not start on 127.0.0.1:$port: $(tail -5 "$_kms_tmp/kms.log")"
			return
		fi
		sleep 0.2
	done
	export DEPLOYER_TEST_KMS_ENDPOINT="http://127.0.0.1:$port"
	_kms_log "local-kms on $DEPLOYER_TEST_KMS_ENDPOINT"
}

# kms_stop stops local-kms and removes its data.
kms_stop() {
	if [ -n "$_kms_pid" ]; then
		{ kill "$_kms_pid" 2>/dev/null && wait "$_kms_pid" 2>/dev/null; } || true
		_kms_pid=""
	fi
	if [ -n "$_kms_tmp" ]; then
		rm -rf "$_kms_tmp"
		_kms_tmp=""
	fi
	unset DEPLOYER_TEST_KMS_ENDPOINT
}

if [ "${KMS_NO_AUTOSTART:-}" != "1" ]; then
	kms_start || true
fi
