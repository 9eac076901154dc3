#!/usr/bin/env bash
# The long lock storm of docs/locking.md#lock-storms, through the built binary:
# on every lock backend at once (file, DynamoDB on dynalite, S3 on MinIO,
# Redis, PostgreSQL, started by scripts/test.sh), 8 `deployer lock exec`
# processes each run CYCLES sections of SECONDS on one key. It prints one row
# per backend (longest wait, its bound 1.2 x 7 x SECONDS, lost updates,
# overlaps) and exits non-zero when a section overlapped, an update was lost
# or a wait exceeded the bound.
#
#   scripts/lock-storm.sh [CYCLES [SECONDS [BACKENDS]]]   # default: 250 1 all
#
# 8 x 250 one-second sections take about 40 minutes. The per-run times
# (storm-BACKEND.tsv) and the test's log go to $DEPLOYER_STORM_OUT (default:
# a new directory under /tmp, printed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-250}
section=${2:-1}
backends=${3:-}
out=${DEPLOYER_STORM_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lock-storm.XXXXXX")}
mkdir -p "$out"
export DEPLOYER_STORM_CYCLES=$cycles DEPLOYER_STORM_SECTION=$section DEPLOYER_STORM_BACKENDS=$backends
export DEPLOYER_STORM_PARALLEL=1 DEPLOYER_STORM_OUT=$out
status=0
bash scripts/test.sh go test -count=1 -run '^TestLockExecStorm$' -v -parallel 5 -timeout 4h ./internal/e2e/ \
	>"$out/storm.log" 2>&1 || status=$?
grep -E -- '^\s*--- (PASS|FAIL)|STORM' "$out/storm.log" || true
echo
printf '%-9s %7s %8s %13s %8s %9s %9s %9s %-6s\n' backend cycles section longest_wait bound lost overlaps elapsed within
grep -o 'STORM .*' "$out/storm.log" | while read -r _ line; do
	declare -A f=()
	for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
	within=$(awk -v w="${f[longest_wait]%s}" -v b="${f[bound]%s}" 'BEGIN { print (w <= b) ? "yes" : "NO" }')
	printf '%-9s %7s %8s %13s %8s %9s %9s %9s %-6s\n' "${f[backend]}" "${f[workers]}x${f[cycles]}" "${f[section]}" \
		"${f[longest_wait]}" "${f[bound]}" "${f[lost_updates]}" "${f[overlaps]}" "${f[elapsed]}" "$within"
	[ "$within" = yes ] || echo "over bound" >>"$out/over"
done
echo "log and per-run times: $out"
if [ -e "$out/over" ]; then
	status=1
fi
exit "$status"
