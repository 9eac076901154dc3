# shellcheck shell=bash
# Self-hosted test servers for deployer's Redis and PostgreSQL backends (docs/self-hosted.md#tests).
#
# Sourced by scripts/test.sh, not run on its own:
#
#   . scripts/test-servers/selfhosted.sh   # starts both servers, exports
#                                          # DEPLOYER_TEST_REDIS_URL, DEPLOYER_TEST_POSTGRES_URL
#   trap selfhosted_servers_stop EXIT
#
# Set SELFHOSTED_NO_AUTOSTART=1 before sourcing to only define the functions
# and call selfhosted_servers_start yourself.
#
# Both servers listen on 127.0.0.1 on a free port with a throwaway data
# directory. When a package is missing and we run as root, it is installed with
# apt-get (Debian redis-server, postgresql). PostgreSQL refuses to run as root,
# so as root the cluster runs as the system user deployer-test (created here).
# In CI (CI=true) a server that cannot start exits the sourcing shell with 1;
# elsewhere the reason is printed and the tests that need it skip.

SELFHOSTED_DIR=""
SELFHOSTED_REDIS_PID=""
SELFHOSTED_PG_BIN=""
SELFHOSTED_PG_DATA=""
SELFHOSTED_PG_USER=""
SELFHOSTED_PG_RESTART_DATA=""

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

selfhosted_log() { echo "selfhosted: $*" >&2; }

# selfhosted_fail MESSAGE: exit 1 in CI, print and return 1 elsewhere.
selfhosted_fail() {
	if [ "${CI:-}" = "true" ]; then
		selfhosted_log "error: $* (CI=true: a test server that cannot start fails the run)"
		if [ -n "$SELFHOSTED_DIR" ]; then
			local f
			for f in "$SELFHOSTED_DIR"/*/*.log; do
				[ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
			done
		fi
		selfhosted_servers_stop
		exit 1
	fi
	selfhosted_log "warning: $*; tests that need it will skip"
	return 1
}

# selfhosted_apt PACKAGE...: install Debian packages when we are root.
selfhosted_apt() {
	if [ "$(id -u)" != "0" ]; then
		selfhosted_log "cannot install $* (not root): install them with apt-get"
		return 1
	fi
	selfhosted_log "installing $* with apt-get"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2; then
		apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
	fi
}

# selfhosted_wait SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
selfhosted_wait() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# The README tour (internal/e2e/tour_test.go) reads a lock id with jq.
selfhosted_tools() {
	command -v jq >/dev/null 2>&1 || selfhosted_apt jq || selfhosted_fail "jq is not installed"
}

selfhosted_redis_start() {
	if ! command -v redis-server >/dev/null 2>&1; then
		selfhosted_apt redis-server || { selfhosted_fail "redis-server is not installed"; return 1; }
	fi
	local port
	port=$(test_servers_free_port) || { selfhosted_fail "no free port for redis-server"; return 1; }
	mkdir -p "$SELFHOSTED_DIR/redis"
	redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
		--dir "$SELFHOSTED_DIR/redis" --logfile "$SELFHOSTED_DIR/redis/redis.log" \
		--pidfile "$SELFHOSTED_DIR/redis/redis.pid" --daemonize yes >&2 ||
		{ selfhosted_fail "redis-server did not start (see $SELFHOSTED_DIR/redis/redis.log)"; return 1; }
	if ! selfhosted_wait 10 redis-cli -h 127.0.0.1 -p "$port" ping; then
		selfhosted_fail "redis-server on 127.0.0.1:$port did not answer PING within 10s (log: $SELFHOSTED_DIR/redis/redis.log)"
		return 1
	fi
	SELFHOSTED_REDIS_PID=$(cat "$SELFHOSTED_DIR/redis/redis.pid" 2>/dev/null)
	export DEPLOYER_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
	# Redis Sentinel and Cluster tests start their own servers with it.
	DEPLOYER_TEST_REDIS_SERVER=$(command -v redis-server)
	export DEPLOYER_TEST_REDIS_SERVER
	selfhosted_log "redis-server on $DEPLOYER_TEST_REDIS_URL (pid $SELFHOSTED_REDIS_PID)"
}

# selfhosted_pg_run CMD...: run a PostgreSQL binary as the cluster's owner.
selfhosted_pg_run() {
	if [ -n "$SELFHOSTED_PG_USER" ]; then
		runuser -u "$SELFHOSTED_PG_USER" -- "$@"
	else
		"$@"
	fi
}

# selfhosted_pg_cluster VAR WHAT DIR PORT SETTINGS: initialise a PostgreSQL
# cluster in DIR/data (owned by SELFHOSTED_PG_USER when running as root),
# start it on 127.0.0.1:PORT with fsync off plus SETTINGS (server -c
# options), and create the database deployer_test. VAR (a variable name)
# holds the data directory while the cluster may be running, for
# selfhosted_servers_stop; WHAT names the cluster in failures.
selfhosted_pg_cluster() {
	local var=$1 what=$2 dir=$3 port=$4 settings=$5
	mkdir -p "$dir"
	if [ -n "$SELFHOSTED_PG_USER" ]; then chown "$SELFHOSTED_PG_USER" "$dir"; fi
	printf -v "$var" '%s' "$dir/data"
	selfhosted_pg_run "$SELFHOSTED_PG_BIN/initdb" -D "$dir/data" -U postgres \
		--auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ selfhosted_fail "initdb of $what failed (log: $dir/initdb.log)"; return 1; }
	selfhosted_pg_run "$SELFHOSTED_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir/data -c fsync=off $settings" \
		start >/dev/null 2>&1 ||
		{ selfhosted_fail "$what did not start on 127.0.0.1:$port (log: $dir/postgres.log)"; printf -v "$var" '%s' ""; return 1; }
	selfhosted_pg_run "$SELFHOSTED_PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres deployer_test >&2 ||
		{ selfhosted_fail "createdb deployer_test on $what failed"; return 1; }
}

selfhosted_postgres_start() {
	SELFHOSTED_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$SELFHOSTED_PG_BIN" ]; then
		selfhosted_apt postgresql || { selfhosted_fail "postgresql is not installed"; return 1; }
		SELFHOSTED_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
		[ -n "$SELFHOSTED_PG_BIN" ] || { selfhosted_fail "postgresql installed but no /usr/lib/postgresql/*/bin"; return 1; }
	fi
	if [ "$(id -u)" = "0" ]; then
		SELFHOSTED_PG_USER=deployer-test
		if ! id "$SELFHOSTED_PG_USER" >/dev/null 2>&1; then
			useradd --system --no-create-home --shell /usr/sbin/nologin "$SELFHOSTED_PG_USER" ||
				{ selfhosted_fail "cannot create user $SELFHOSTED_PG_USER to run PostgreSQL"; return 1; }
		fi
	fi
	local port dir="$SELFHOSTED_DIR/postgres"
	port=$(test_servers_free_port) || { selfhosted_fail "no free port for PostgreSQL"; return 1; }
	selfhosted_pg_cluster SELFHOSTED_PG_DATA PostgreSQL "$dir" "$port" \
		"-c synchronous_commit=off -c full_page_writes=off -c max_connections=300" || return 1
	export DEPLOYER_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/deployer_test?sslmode=disable"
	selfhosted_log "PostgreSQL on $DEPLOYER_TEST_POSTGRES_URL"
}

# selfhosted_postgres_restart_start: a second PostgreSQL cluster that the
# failover tests restart (pg_ctl restart -m fast) while a lock storm runs;
# the shared one must never restart under other packages' tests. Exports
# DEPLOYER_TEST_POSTGRES_RESTART_URL and DEPLOYER_TEST_POSTGRES_RESTART_CMD.
selfhosted_postgres_restart_start() {
	[ -n "$SELFHOSTED_PG_BIN" ] || return 1
	local port dir="$SELFHOSTED_DIR/postgres-restart" run=""
	port=$(test_servers_free_port) || { selfhosted_fail "no free port for the restartable PostgreSQL"; return 1; }
	if [ -n "$SELFHOSTED_PG_USER" ]; then run="runuser -u $SELFHOSTED_PG_USER --"; fi
	selfhosted_pg_cluster SELFHOSTED_PG_RESTART_DATA "the restartable PostgreSQL" "$dir" "$port" "-c max_connections=100" || return 1
	export DEPLOYER_TEST_POSTGRES_RESTART_URL="postgres://postgres@127.0.0.1:$port/deployer_test?sslmode=disable"
	export DEPLOYER_TEST_POSTGRES_RESTART_CMD="$run $SELFHOSTED_PG_BIN/pg_ctl -D $SELFHOSTED_PG_RESTART_DATA -l $dir/postgres.log -m fast -w -t 60 restart"
	selfhosted_log "restartable PostgreSQL on $DEPLOYER_TEST_POSTGRES_RESTART_URL"
}

# selfhosted_servers_start: start both servers; returns 0 even when one could
# not start outside CI (its variable stays unset and its tests skip).
selfhosted_servers_start() {
	SELFHOSTED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/deployer-selfhosted.XXXXXX") ||
		{ selfhosted_fail "cannot create a temporary directory"; return 0; }
	chmod 755 "$SELFHOSTED_DIR"
	selfhosted_tools || true
	selfhosted_redis_start || true
	selfhosted_postgres_start && selfhosted_postgres_restart_start || true
	return 0
}

# selfhosted_servers_stop: stop both servers and remove their data directories.
selfhosted_servers_stop() {
	if [ -n "$SELFHOSTED_REDIS_PID" ]; then
		kill "$SELFHOSTED_REDIS_PID" 2>/dev/null || true
		SELFHOSTED_REDIS_PID=""
	fi
	if [ -n "$SELFHOSTED_PG_DATA" ] && [ -n "$SELFHOSTED_PG_BIN" ]; then
		selfhosted_pg_run "$SELFHOSTED_PG_BIN/pg_ctl" -D "$SELFHOSTED_PG_DATA" -m immediate -w stop >/dev/null 2>&1 || true
		SELFHOSTED_PG_DATA=""
	fi
	if [ -n "$SELFHOSTED_PG_RESTART_DATA" ] && [ -n "$SELFHOSTED_PG_BIN" ]; then
		selfhosted_pg_run "$SELFHOSTED_PG_BIN/pg_ctl" -D "$SELFHOSTED_PG_RESTART_DATA" -m immediate -w stop >/dev/null 2>&1 || true
		SELFHOSTED_PG_RESTART_DATA=""
	fi
	if [ -n "$SELFHOSTED_DIR" ]; then
		rm -rf "$SELFHOSTED_DIR"
		SELFHOSTED_DIR=""
	fi
	unset DEPLOYER_TEST_REDIS_URL DEPLOYER_TEST_POSTGRES_URL DEPLOYER_TEST_REDIS_SERVER \
		DEPLOYER_TEST_POSTGRES_RESTART_URL DEPLOYER_TEST_POSTGRES_RESTART_CMD
}

if [ "${SELFHOSTED_NO_AUTOSTART:-}" != "1" ]; then
	selfhosted_servers_start
fi
