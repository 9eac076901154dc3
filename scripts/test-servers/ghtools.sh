# shellcheck shell=bash
# The GitHub tools of the repository's own checks (docs/github-actions.md#the-repositorys-own-workflows):
#   actionlint  lints .github/workflows (make lint)        -> DEPLOYER_TEST_ACTIONLINT
#   goreleaser  checks .goreleaser.yaml (make lint) and builds a
#               snapshot release in the release-names test  -> DEPLOYER_TEST_GORELEASER
#   act         runs a workflow with the action in host mode,
#               no Docker (internal/e2e/act_test.go)        -> DEPLOYER_TEST_ACT
#   cosign      signs a test release with a throwaway key and
#               verifies it in the action's install step
#               (internal/e2e/release_signature_test.go)    -> DEPLOYER_TEST_COSIGN
# Source this file; it installs each (once, cached in the tools cache,
# lib.sh test_tools_dir, under NAME-VERSION/)
# with go install from the Go module proxy and exports its path. They are
# tools, not servers: nothing is started and nothing needs stopping.
#
# In CI (CI=true) a tool that cannot be installed exits non-zero; elsewhere
# the reason is printed and the tests that need it skip.
# GHTOOLS_ONLY="NAME ..." installs only those (the release workflow: goreleaser).

_ghtools_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Pinned: a new pin installs beside the old one instead of reusing it.
GHTOOLS_ACTIONLINT_VERSION=v1.7.12
GHTOOLS_GORELEASER_VERSION=v2.15.1 # newer releases need a newer Go than go.mod's
GHTOOLS_ACT_VERSION=v0.2.89
# The cosign that action.yml and the release workflow install (their
# cosign-release), so the tests sign and verify with the release's cosign.
GHTOOLS_COSIGN_VERSION=v2.6.1

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
GHTOOLS_DIR="${GHTOOLS_DIR:-$(test_tools_dir)}"

_ghtools_log() { echo "test-servers/ghtools: $*" >&2; }

_ghtools_fail() { test_servers_fail _ghtools_log true "the tests that need it" "$@"; }

# _ghtools_install NAME VERSION PACKAGE VARIABLE: go install PACKAGE@VERSION
# into the tools cache's NAME-VERSION/ unless it is there, and export VARIABLE=its path.
_ghtools_install() {
	local name=$1 version=$2 pkg=$3 var=$4
	case " ${GHTOOLS_ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
	local bin="$GHTOOLS_DIR/$name-$version/$name"
	test_tools_ensure _ghtools_log _ghtools_fail "$name" "$bin" "$pkg@$version" || return 1
	export "$var=$bin"
}

_ghtools_install actionlint "$GHTOOLS_ACTIONLINT_VERSION" github.com/rhysd/actionlint/cmd/actionlint DEPLOYER_TEST_ACTIONLINT || true
_ghtools_install goreleaser "$GHTOOLS_GORELEASER_VERSION" github.com/goreleaser/goreleaser/v2 DEPLOYER_TEST_GORELEASER || true
_ghtools_install act "$GHTOOLS_ACT_VERSION" github.com/nektos/act DEPLOYER_TEST_ACT || true
_ghtools_install cosign "$GHTOOLS_COSIGN_VERSION" github.com/sigstore/cosign/v2/cmd/cosign DEPLOYER_TEST_COSIGN || true
