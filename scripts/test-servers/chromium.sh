# shellcheck shell=bash
# Debian's chromium for the browser test of deployer ui (internal/e2e/ui_browser_test.go,
# driven by chromedp; docs/ui.md).
#
# Source this file from scripts/test.sh; when chromium is missing and we run
# as root it is installed with apt-get (Debian package chromium), then it
# exports:
#   DEPLOYER_TEST_CHROMIUM  the path of the chromium binary
# No server runs: the test starts its own headless browser.
#
# In CI (CI=true) a chromium that cannot be installed exits non-zero;
# elsewhere the reason is printed and the browser test skips.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

_chromium_log() { echo "test-servers/chromium: $*" >&2; }

chromium_stop() { unset DEPLOYER_TEST_CHROMIUM; }

_chromium_fail() { test_servers_fail _chromium_log chromium_stop "the deployer ui browser test" "$@"; }

# chromium_find: print the path of an installed chromium.
chromium_find() {
	command -v chromium || command -v chromium-browser
}

chromium_start() {
	local bin
	if ! bin=$(chromium_find); then
		if [ "$(id -u)" != "0" ]; then
			_chromium_fail "chromium not found and not root: install it with apt-get install chromium"
			return
		fi
		_chromium_log "installing chromium with apt-get (once)"
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2; then
			apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2
		fi
		bin=$(chromium_find) || { _chromium_fail "apt-get install chromium failed"; return; }
	fi
	export DEPLOYER_TEST_CHROMIUM="$bin"
	_chromium_log "chromium at $bin ($("$bin" --version 2>/dev/null | head -1))"
}

if [ -z "${CHROMIUM_NO_AUTOSTART:-}" ]; then
	chromium_start || true
fi
