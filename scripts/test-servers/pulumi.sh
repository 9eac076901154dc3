# shellcheck shell=bash
# The Pulumi CLI and the project's test provider, for the real-CLI tests of
# the Pulumi engine (docs/pulumi.md, "Tests against the real CLI").
#
# Sourced by scripts/test.sh, not run on its own:
#
#   . scripts/test-servers/pulumi.sh   # builds what is missing, puts both on
#                                      # PATH, exports DEPLOYER_TEST_PULUMI and
#                                      # DEPLOYER_TEST_PULUMI_PLUGINS
#
# The CLI is built from the Go module proxy through the wrapper module
# scripts/pulumi-cli (pkg/v3 carries replace directives, so `go install
# pkg@version` is refused) into the tools cache (lib.sh test_tools_dir),
# pulumi-$PULUMI_VERSION/bin,
# once: about 15 min on 2 cores with a cold Go build cache, seconds with a
# warm one; it is rebuilt only when missing. The test provider
# (pulumi-resource-deployertest, internal/engine/pulumi/testprovider) is the
# project's own code and is built on every run (seconds).
#
# In CI (CI=true) a CLI or provider that cannot be built exits the sourcing
# shell with 1; elsewhere the reason is printed and the real-CLI tests skip.

PULUMI_VERSION="${PULUMI_VERSION:-v3.259.0}"

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pulumi_log() { echo "pulumi: $*" >&2; }

pulumi_fail() { test_servers_fail pulumi_log true "the real-CLI Pulumi tests" "$@"; }

# pulumi_tools_build: build the CLI and the test provider when missing and
# export what the tests read.
pulumi_tools_build() {
	local root tools cli_dir cli plugins log start
	root=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
	tools=$(test_tools_dir)
	cli_dir="$tools/pulumi-$PULUMI_VERSION/bin"
	cli="$cli_dir/pulumi"
	mkdir -p "$cli_dir"
	# Two runs on the machine (two clones) build it once: the second waits.
	local lockfd
	exec {lockfd}>"$tools/pulumi-$PULUMI_VERSION/build.lock"
	flock "$lockfd" 2>/dev/null || true
	if ! test_tools_ok "$cli"; then
		log="$tools/pulumi-$PULUMI_VERSION/build.log.$$"
		pulumi_log "building the Pulumi CLI $PULUMI_VERSION from the Go module proxy (once; ~15 min cold on 2 cores); log: $log"
		start=$(date +%s)
		if ! (cd "$root/scripts/pulumi-cli" && go build -trimpath \
			-ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" \
			-o "$cli.tmp.$$" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi) >"$log" 2>&1; then
			rm -f "$cli.tmp.$$"
			tail -n 20 "$log" >&2
			exec {lockfd}>&-
			pulumi_fail "could not build the Pulumi CLI $PULUMI_VERSION"
			return 1
		fi
		test_tools_publish "$cli" "$cli.tmp.$$"
		pulumi_log "built the Pulumi CLI in $(($(date +%s) - start)) s"
		if [ -n "${DEPLOYER_TEST_PHASES:-}" ]; then
			printf '%s\t%s\n' "build the Pulumi CLI" "$(($(date +%s) - start))" >>"$DEPLOYER_TEST_PHASES"
		fi
	fi
	exec {lockfd}>&-
	plugins="${DEPLOYER_TEST_TMP:-$(mktemp -d)}/pulumi-plugins"
	mkdir -p "$plugins"
	if ! test_phase "build the test provider" eval '(cd "$root" && go build -o "$plugins/pulumi-resource-deployertest" ./internal/engine/pulumi/testprovider) >&2'; then
		pulumi_fail "could not build the test provider pulumi-resource-deployertest"
		return 1
	fi
	export PATH="$cli_dir:$plugins:$PATH"
	export DEPLOYER_TEST_PULUMI="$cli"
	export DEPLOYER_TEST_PULUMI_PLUGINS="$plugins"
	export PULUMI_SKIP_UPDATE_CHECK=true
	pulumi_log "$("$cli" version) at $cli; test provider in $plugins"
}

if [ -z "${PULUMI_NO_AUTOSTART:-}" ]; then
	pulumi_tools_build
fi
