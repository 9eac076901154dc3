# shellcheck shell=bash
# What the test-server scripts (aws.sh, selfhosted.sh, otelcol.sh, pulumi.sh)
# share. Each of them sources this file; it defines functions only.

# test_servers_free_port: print a TCP port nobody listens on at 127.0.0.1.
test_servers_free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# test_servers_fail LOG_FN STOP_FN WHAT_SKIPS MESSAGE...: in CI (CI=true) log
# MESSAGE, call STOP_FN and exit 1: a server the test script can install must
# not make tests skip there. Elsewhere log MESSAGE and that WHAT_SKIPS will
# skip, and return 1.
test_servers_fail() {
	local log=$1 stop=$2 skips=$3
	shift 3
	if [ "${CI:-}" = "true" ]; then
		"$log" "error: $* (CI=true: a test server or tool that cannot start fails the run)"
		"$stop"
		exit 1
	fi
	"$log" "warning: $*; $skips will skip"
	return 1
}
