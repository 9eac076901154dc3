# Shared helpers of the quickstart scripts (POSIX sh, coreutils only).
# Sourced by every script; deployer runs them in examples/quickstart/.

: "${DEPLOYER_ENVIRONMENT:?run this script through deployer (DEPLOYER_ENVIRONMENT is unset)}"
: "${DEPLOYER_OUTPUTS:?run this script through deployer (DEPLOYER_OUTPUTS is unset)}"

# OUT is this environment's output directory.
OUT="out/$DEPLOYER_ENVIRONMENT"

# say prints one progress line (deployer prefixes it with the component).
say() { printf '%s\n' "$*"; }

# die prints an error on stderr and fails the component.
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# sha256 prints the hex SHA-256 of file $1.
sha256() { set -- $(sha256sum "$1"); printf '%s' "$1"; }

# outputs writes the component's outputs: a JSON object given as $1.
outputs() { printf '%s\n' "$1" > "$DEPLOYER_OUTPUTS"; }

# write_if_changed moves $1.tmp over $1 unless identical, so re-runs leave
# files (and their mtimes) untouched.
write_if_changed() {
	if [ -f "$1" ] && [ "$(sha256 "$1.tmp")" = "$(sha256 "$1")" ]; then
		rm -f "$1.tmp"
		return 1
	fi
	mv "$1.tmp" "$1"
}
