#!/bin/sh
# config/render: renders the app's config file from the component's config
# and the environment's domain.
# Outputs: path, sha256.
set -eu
. "$(dirname "$0")/lib.sh"

: "${DEPLOYER_CONFIG_APP_NAME:?config/render needs config.app_name}"
dir="$OUT/config"
file="$dir/app.conf"
mkdir -p "$dir"
cat > "$file.tmp" <<CONF
# rendered by deployer for $DEPLOYER_STACK/$DEPLOYER_ENVIRONMENT; do not edit
app_name  = $DEPLOYER_CONFIG_APP_NAME
greeting  = ${DEPLOYER_CONFIG_GREETING:-hello}
log_level = ${DEPLOYER_CONFIG_LOG_LEVEL:-info}
domain    = ${DEPLOYER_ENV_CONFIG_DOMAIN:-localhost}
CONF
state=unchanged
write_if_changed "$file" && state=written
sum=$(sha256 "$file")
say "$state $file (sha256 $(printf '%.12s' "$sum"))"
outputs "{\"path\":\"$file\",\"sha256\":\"$sum\"}"
