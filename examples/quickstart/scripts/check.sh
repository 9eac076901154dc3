#!/bin/sh
# app/check: verifies app/build's bundle against its checksum file and the
# checksum app/build reported, and that it is at least config.min_bytes long.
# It reads its dependencies from the JSON on stdin as well, to show both ways.
# Outputs: verified, sha256, bytes.
set -eu
. "$(dirname "$0")/lib.sh"

input=$(cat)
case "$input" in
*'"app/build":{'*) ;;
*) die "stdin does not list app/build under dependencies: is depends_on set?" ;;
esac
artifact="${DEPLOYER_DEP_APP_BUILD_ARTIFACT:?app/check needs app/build's artifact output}"
want="${DEPLOYER_DEP_APP_BUILD_SHA256:?app/check needs app/build's sha256 output}"
[ -f "$artifact" ] || die "bundle $artifact is missing: deploy app/build again"

(cd "$(dirname "$artifact")" && sha256sum -c --quiet "$(basename "$artifact").sha256") ||
	die "bundle $artifact does not match its .sha256 file"
got=$(sha256 "$artifact")
[ "$got" = "$want" ] || die "bundle $artifact has sha256 $got but app/build reported $want"
bytes=$(wc -c < "$artifact")
bytes=$((bytes + 0))
[ "$bytes" -ge "${DEPLOYER_CONFIG_MIN_BYTES:-1}" ] ||
	die "bundle $artifact is $bytes bytes, under config.min_bytes=$DEPLOYER_CONFIG_MIN_BYTES"

mkdir -p "$OUT/check"
printf 'artifact %s\nsha256 %s\nbytes %s\nresult ok\n' "$artifact" "$got" "$bytes" > "$OUT/check/report.txt"
say "verified $artifact ($bytes bytes, sha256 $(printf '%.12s' "$got"))"
outputs "{\"verified\":true,\"sha256\":\"$got\",\"bytes\":$bytes,\"report\":\"$OUT/check/report.txt\"}"
