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

# test_tools_dir: print the directory the tools are cached in, outside the
# clone so every clone on the machine (CI's fresh one included) reuses what
# one built: $DEPLOYER_TOOLS, else $XDG_CACHE_HOME/deployer-tools, else
# ~/.cache/deployer-tools. Each tool lives in NAME-VERSION/ beside a sha256 of
# its binary; a new pin builds beside the old one.
test_tools_dir() {
	echo "${DEPLOYER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/deployer-tools}"
}

# test_tools_ok BIN: the cached binary BIN is there and matches the sha256
# written beside it when it was built (a half-written or altered binary is
# rebuilt, not run).
test_tools_ok() {
	[ -x "$1" ] && [ -f "$1.sha256" ] && (cd "$(dirname "$1")" && sha256sum --status -c "$(basename "$1").sha256")
}

# test_tools_publish BIN TMPBIN: write TMPBIN's sha256 and move it to BIN;
# two runs building the same tool at once each publish a whole binary.
test_tools_publish() {
	local bin=$1 tmp=$2
	mkdir -p "$(dirname "$bin")"
	mv -f "$tmp" "$bin.$$" &&
		(cd "$(dirname "$bin")" && sha256sum "$(basename "$bin").$$" | sed "s/\.$$\$//" >"$(basename "$bin").sha256.$$") &&
		mv -f "$bin.$$" "$bin" && mv -f "$bin.sha256.$$" "$bin.sha256"
}

# test_tools_go_install BIN PACKAGE@VERSION: go install into a temporary
# directory, then publish as BIN (checksummed). Returns go's status.
test_tools_go_install() {
	local bin=$1 pkg=$2 work
	work=$(mktemp -d "${TMPDIR:-/tmp}/deployer-tool.XXXXXX")
	if ! GOBIN="$work" go install "$pkg" >&2; then
		rm -rf "$work"
		return 1
	fi
	# go install writes exactly one binary, named after the package.
	local rc=0
	test_tools_publish "$bin" "$(find "$work" -type f | head -1)" || rc=$?
	rm -rf "$work"
	return $rc
}

# test_tools_ensure LOG_FN FAIL_FN NAME BIN PACKAGE@VERSION: unless BIN is
# cached and whole (test_tools_ok), go install PACKAGE@VERSION into it, once,
# as the phase "install NAME". When that fails, calls FAIL_FN with why and
# returns 1.
test_tools_ensure() {
	local log=$1 fail=$2 name=$3 bin=$4 pkg=$5
	test_tools_ok "$bin" && return 0
	command -v go >/dev/null || { "$fail" "go not found: cannot install $name"; return 1; }
	"$log" "installing $name ${pkg##*@} into ${bin%/*} (go install, once)"
	test_phase "install $name" test_tools_go_install "$bin" "$pkg" ||
		{ "$fail" "go install $pkg failed"; return 1; }
}

# test_phase NAME COMMAND...: run COMMAND and, when DEPLOYER_TEST_PHASES names
# a file, append "NAME<TAB>seconds<TAB>cpu seconds" to it (the table
# scripts/test.sh prints at the end). CPU seconds are the user + system time
# of the processes COMMAND ran and waited for (go test's test binaries
# included): on 2 cores a phase whose CPU is well under twice its seconds
# left a core idle. Returns COMMAND's status.
test_phase() {
	local name=$1 start=$SECONDS rc=0 cpu0 cpu
	shift
	if [ "$(type -t "$1")" = file ]; then
		# A program runs in a subshell that counts only its own children: a
		# background job of this shell that ends meanwhile is not its CPU.
		local f="${TMPDIR:-/tmp}/deployer-phase-cpu.$BASHPID.$RANDOM"
		(
			r=0
			"$@" || r=$?
			test_cpu_seconds
			echo "$test_cpu" >"$f"
			exit $r
		) || rc=$?
		cpu=$(cat "$f" 2>/dev/null || echo 0)
		rm -f "$f"
	else
		test_cpu_seconds
		cpu0=$test_cpu
		"$@" || rc=$?
		test_cpu_seconds
		cpu=$((test_cpu - cpu0))
	fi
	if [ -n "${DEPLOYER_TEST_PHASES:-}" ]; then
		printf '%s\t%s\t%s\n' "$name" "$((SECONDS - start))" "$(((cpu + 50) / 100))" >>"$DEPLOYER_TEST_PHASES"
	fi
	return $rc
}

# test_cpu_seconds: set test_cpu to the user + system centiseconds of this
# shell's waited-for children so far (the times builtin's second line,
# "0m1.5s 0m0.2s"; run in this shell, not in a $(...) subshell, whose
# children are its own).
test_cpu_seconds() {
	local f="${TMPDIR:-/tmp}/deployer-times.$BASHPID"
	times >"$f"
	test_cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d\n", s * 100 }' "$f")
	rm -f "$f"
}
