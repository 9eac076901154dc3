#!/bin/sh
# docs/publish: copies docs/site into out/{env}/published/{channel}/. When
# the channel changes, the copy in the previous channel (from this
# component's previous outputs) is removed.
# Outputs: dir, url, channel.
set -eu
. "$(dirname "$0")/lib.sh"

src="${DEPLOYER_DEP_DOCS_SITE_DIR:?docs/publish needs docs/site's dir output}"
channel="${DEPLOYER_CONFIG_CHANNEL:?docs/publish needs config.channel}"
case "$channel" in
'' | *[!a-z0-9-]*) die "config.channel '$channel' must be lower-case letters, digits and -" ;;
esac
[ -d "$src" ] || die "site $src is missing: deploy docs/site first"

dest="$OUT/published/$channel"
mkdir -p "$dest"
cp -R "$src/." "$dest/"
old="${DEPLOYER_OUTPUT_DIR:-}"
if [ -n "$old" ] && [ "$old" != "$dest" ]; then
	rm -rf "$old"
	say "unpublished $old"
fi
say "published $src to $dest"
outputs "{\"dir\":\"$dest\",\"url\":\"file://$PWD/$dest/index.html\",\"channel\":\"$channel\"}"
