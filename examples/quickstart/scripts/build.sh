#!/bin/sh
# app/build: builds a release bundle from the rendered config (consumed from
# config/render's outputs) and writes its checksum file next to it.
# Outputs: artifact, sha256, version.
set -eu
. "$(dirname "$0")/lib.sh"

: "${DEPLOYER_CONFIG_VERSION:?app/build needs config.version}"
conf="${DEPLOYER_DEP_CONFIG_RENDER_PATH:?app/build needs config/render to have run (no path output)}"
[ -f "$conf" ] || die "rendered config $conf is missing: deploy config/render first"

version="$DEPLOYER_CONFIG_VERSION"
dir="$OUT/build"
artifact="$dir/hello-$version.bundle"
mkdir -p "$dir"
{
	printf '#!/bin/sh\n# hello %s bundle (%s)\n' "$version" "$DEPLOYER_ENVIRONMENT"
	printf 'cat <<"APPCONF"\n'
	cat "$conf"
	printf 'APPCONF\n'
} > "$artifact.tmp"
state=unchanged
write_if_changed "$artifact" && state=built
(cd "$dir" && sha256sum "hello-$version.bundle" > "hello-$version.bundle.sha256")

# A version bump leaves the previous bundle behind: remove it.
old="${DEPLOYER_OUTPUT_ARTIFACT:-}"
if [ -n "$old" ] && [ "$old" != "$artifact" ]; then
	rm -f "$old" "$old.sha256"
	say "removed previous bundle $old"
fi
sum=$(sha256 "$artifact")
say "$state $artifact (version $version, sha256 $(printf '%.12s' "$sum"))"
outputs "{\"artifact\":\"$artifact\",\"sha256\":\"$sum\",\"version\":\"$version\"}"
