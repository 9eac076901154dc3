#!/bin/sh
# docs/site: renders an HTML page about the release app/build made and
# app/check verified.
# Outputs: dir, index, sha256.
set -eu
. "$(dirname "$0")/lib.sh"

version="${DEPLOYER_DEP_APP_BUILD_VERSION:?docs/site needs app/build's version output}"
sum="${DEPLOYER_DEP_APP_BUILD_SHA256:?docs/site needs app/build's sha256 output}"
[ "${DEPLOYER_DEP_APP_CHECK_VERIFIED:-}" = true ] || die "app/check did not verify the bundle"
title="${DEPLOYER_CONFIG_TITLE:-hello}"

dir="$OUT/site"
index="$dir/index.html"
mkdir -p "$dir"
cat > "$index.tmp" <<HTML
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>$title</title></head>
<body>
<h1>$title</h1>
<p>Environment <b>$DEPLOYER_ENVIRONMENT</b> of stack <b>$DEPLOYER_STACK</b>
(${DEPLOYER_ENV_CONFIG_DOMAIN:-localhost}).</p>
<ul>
<li>version: <code>$version</code></li>
<li>bundle sha256: <code>$sum</code> (verified)</li>
</ul>
</body>
</html>
HTML
state=unchanged
write_if_changed "$index" && state=rendered
say "$state $index for version $version"
outputs "{\"dir\":\"$dir\",\"index\":\"$index\",\"sha256\":\"$(sha256 "$index")\"}"
