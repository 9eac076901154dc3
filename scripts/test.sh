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
#
# The tools are built once per version into a cache outside the clone
# ($XDG_CACHE_HOME/deployer-tools, else ~/.cache/deployer-tools; DEPLOYER_TOOLS
# overrides), checksummed, so every clone on the machine reuses them. At the
# end the run prints a table of its phases and their seconds: each tool's
# install, each server's start, vet, the go test packages over 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source scripts/test-servers/lib.sh
export DEPLOYER_TOOLS
DEPLOYER_TOOLS=$(test_tools_dir)
mkdir -p "$DEPLOYER_TOOLS"
export DEPLOYER_TEST_TMP
DEPLOYER_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/deployer-test.XXXXXX")
chmod 755 "$DEPLOYER_TEST_TMP"
export DEPLOYER_TEST_PHASES="$DEPLOYER_TEST_TMP/phases.tsv"
: >"$DEPLOYER_TEST_PHASES"
run_start=$SECONDS

# print_phases: the table of where the time went (phases in run order, then
# the go test packages over 30 s, slowest first).
print_phases() {
	[ -s "$DEPLOYER_TEST_PHASES" ] || return 0
	echo "== where the time went (seconds; cpu: user + system seconds of the phase's processes, blank when not measured)"
	printf '%6s %6s  %s\n' wall cpu phase
	awk -F'\t' '{ printf "%6d %6s  %s\n", $2, $3, $1 }' "$DEPLOYER_TEST_PHASES"
	test_cpu_seconds
	printf '%6d %6d  %s\n' "$((SECONDS - run_start))" "$((test_cpu / 100))" "total"
	[ ! -s "$DEPLOYER_TEST_TMP/counts" ] || cat "$DEPLOYER_TEST_TMP/counts"
}

stops=()
cleanup() {
	local s rc=$?
	for s in "${stops[@]}"; do declare -F "$s" >/dev/null && { "$s" || true; }; done
	print_phases
	rm -rf "$DEPLOYER_TEST_TMP"
	return $rc
}
trap cleanup EXIT

# Each script starts its servers when sourced and exits non-zero in CI when
# one cannot start; outside CI a failure only means those tests skip.
stops+=(aws_servers_stop)
test_phase "dynalite + MinIO (install when missing, start)" source scripts/test-servers/aws.sh || true
stops+=(selfhosted_servers_stop)
test_phase "redis-server + PostgreSQL (install when missing, start)" source scripts/test-servers/selfhosted.sh || true
stops+=(otelcol_stop)
test_phase "OpenTelemetry Collector (build when missing, start)" source scripts/test-servers/otelcol.sh || true
stops+=(kms_stop)
test_phase "local-kms (install when missing, start)" source scripts/test-servers/kms.sh || true
# Debian's chromium for the browser test of deployer ui (no server: the test starts it).
stops+=(chromium_stop)
test_phase "chromium (install when missing)" source scripts/test-servers/chromium.sh || true
# actionlint, goreleaser, act and cosign (the release, signature and act workflow tests).
test_phase "actionlint, goreleaser, act, cosign (install when missing)" source scripts/test-servers/ghtools.sh || true
# The Pulumi CLI (built once into the tools cache) builds in the background
# while the servers start, vet and the Windows build run;
# go test waits for it (pulumi_ready).
pulumi_build_log="$DEPLOYER_TEST_TMP/pulumi-build.log"
(test_phase "Pulumi CLI (build when missing, in the background)" source scripts/test-servers/pulumi.sh) >"$pulumi_build_log" 2>&1 &
pulumi_build=$!

# pulumi_ready: wait for the background build, then put the CLI and the
# test provider on PATH (seconds when the CLI is built).
pulumi_ready() {
	wait "$pulumi_build" || true
	cat "$pulumi_build_log" >&2
	test_phase "Pulumi CLI + test provider (wait for the build, build the provider)" source scripts/test-servers/pulumi.sh || true
}

if [ "${1:-}" = "go" ]; then
	pulumi_ready
	"$@"
	exit $?
fi

if [ "${1:-}" = "bench" ]; then
	pulumi_ready
	go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${BENCHTIME:-2s}" -timeout 2h ./...
	exit 0
fi

echo "== gofmt / go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
test_phase "go vet" go vet ./...

# The release (.goreleaser.yaml) ships Linux, macOS and Windows binaries: the
# Unix-only code (process groups, signals) must stay behind build tags.
# Linux and macOS share the unix build tag; Windows is the other side of it.
echo "== the Windows release target builds"
test_phase "the Windows build" env GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -o /dev/null ./cmd/deployer

echo "== go test -race ./..."
# gotestsum runs go test and keeps every test's result as go test -json, so
# the run ends with how many tests passed and which skipped (under CI=true
# none should). A test runner, not a server: built once into the tools cache.
GOTESTSUM_VERSION=v1.13.0
gotestsum="$DEPLOYER_TOOLS/gotestsum-$GOTESTSUM_VERSION/gotestsum"
if ! test_tools_ok "$gotestsum"; then
	test_phase "install gotestsum" test_tools_go_install "$gotestsum" "gotest.tools/gotestsum@$GOTESTSUM_VERSION"
fi
tests_json="$DEPLOYER_TEST_TMP/tests"
mkdir -p "$tests_json"

# internal/e2e is most of go test's time and keeps about one core busy. Its
# slowest tests (each over 9 s on a loaded machine, then the next ones down
# the list until both processes end about together; `"$gotestsum" tool
# slowest --jsonfile FILE` lists them) run in a second go test process beside
# the rest, and the real-CLI Pulumi tests follow the rest, so both cores work.
# The rest skips exactly what the second process runs: a test renamed or
# added runs with the rest, none runs nowhere.
e2e_slowest='^(TestEightProcessesCountToTwoHundred|TestConvergenceWalk|TestConvergenceWalkOnS3|TestStackReferenceIsReadWhenPlanningWithoutPulumi|TestLockExecStorm|TestActDeployAllWorkflowRunsTheMatrix|TestLockExecOnEveryLockBackend|TestPartitionDuringDeploy|TestSecondDeployFailsAtOnceWithHolderOrWaits|TestRefreshOnlyRecordsWhatIsLive|TestPausedHolderCannotOverwriteItsSuccessor|TestSavedPlanBindsWhatItShowed|TestStackOutputsAndOutputCommand|TestRunIDDeploysTheMatrixInOrderOnFileBackends|TestActionInstallVerifiesTheReleaseSignature|TestPolicyRDSExamplesDenyTheBadPlanAndAllowTheGoodOne|TestCtrlCGivesCommandComponentsTheirGrace|TestUIInABrowser|TestReleaseArchivesAreWhatTheActionInstalls|TestActWorkflowPlanDeployReplanAndFailure|TestTwoMillionValuesAreRefusedAtOnce|TestStacksDiamondOnS3StateAndDynamoDBLocks|TestMovedRenamesWithoutDeleting|TestActionInstallsARelease|TestStacksDiamondOnFileBackends|TestCommandDriftWithRead|TestSecretsAreNeverStoredOrPrinted|TestReadOnlyCommandsSendNoWriteToAWS)$'

# -timeout only turns a hang into a failure: it stands far above what a busy
# 2-core machine needs (internal/e2e took 20 minutes at a load of 10 to 18).
# A few tests outside the real-CLI step check files a Pulumi run touched:
# the CLI must be there before go test starts (its build overlapped the
# servers' start, vet and the Windows build).
pulumi_ready
slowest_log="$DEPLOYER_TEST_TMP/go-test-e2e-slowest.log"
(test_phase "go test -race internal/e2e, its slowest tests (beside the rest)" \
	"$gotestsum" --format standard-quiet --jsonfile "$tests_json/e2e-slowest.json" -- \
	-race -count=1 -timeout 45m -run "$e2e_slowest" ./internal/e2e/ >"$slowest_log" 2>&1) &
slowest=$!

# Each package's "ok" line carries its seconds: those over 30 go in the table.
go_test_log="$DEPLOYER_TEST_TMP/go-test.log"
failed=0
test_phase "go test -race ./... (the rest)" "$gotestsum" --format standard-quiet --jsonfile "$tests_json/rest.json" -- \
	-race -count=1 -timeout 45m -skip "^TestRealPulumi|$e2e_slowest" ./... 2>&1 | tee "$go_test_log" || failed=1
awk '$1 == "ok" && $3 ~ /s$/ { t = $3; sub(/s$/, "", t); if (t + 0 > 30) printf "  go test %s\t%d\n", $2, t }' "$go_test_log" |
	sort -t$'\t' -k2 -rn >>"$DEPLOYER_TEST_PHASES"

# The real-CLI Pulumi tests (internal/e2e/pulumi_test.go through the binary,
# and the Pulumi engine's conformance run), verbose so the log shows each one
# running and its duration. They follow the rest: run beside it as a third
# go test process they made the sequential slowest-tests process the last to
# end (1,080 s against 880). Their two packages run side by side (-p 2):
# each waits on Pulumi processes of its own more than it computes.
echo "== real-CLI Pulumi tests"
pulumi_log="$DEPLOYER_TEST_TMP/real-pulumi.log"
if test_phase "real-CLI Pulumi tests" "$gotestsum" --format standard-verbose --jsonfile "$tests_json/real-pulumi.json" -- \
	-race -count=1 -p 2 -timeout 30m -run '^TestRealPulumi' ./internal/engine/pulumi/ ./internal/e2e/ >"$pulumi_log" 2>&1; then
	grep -E '^(=== RUN|--- |ok|PASS)' "$pulumi_log"
else
	cat "$pulumi_log"
	failed=1
fi

echo "== go test -race internal/e2e, its slowest tests"
wait "$slowest" || failed=1
cat "$slowest_log"
awk '$1 == "ok" && $3 ~ /s$/ { t = $3; sub(/s$/, "", t); printf "  go test %s (its slowest tests)\t%d\n", $2, t }' "$slowest_log" >>"$DEPLOYER_TEST_PHASES"

# How many tests (and subtests) ran, from go test -json; the skipped ones by name.
count_tests() { cat "$tests_json"/*.json | grep -cE "\"Action\":\"$1\",\"Package\":\"[^\"]*\",\"Test\":" || true; }
echo "== tests: $(count_tests pass) passed, $(count_tests fail) failed, $(count_tests skip) skipped (tests and subtests)" >"$DEPLOYER_TEST_TMP/counts"
cat "$tests_json"/*.json | sed -nE 's/.*"Action":"skip","Package":"([^"]*)","Test":"([^"]*)".*/  skipped: \1 \2/p' | sort >>"$DEPLOYER_TEST_TMP/counts"
exit "$failed"
