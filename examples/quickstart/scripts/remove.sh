#!/bin/sh
# Delete command of every quickstart component: removes out/{env}/$1, then
# out/{env} itself once it is empty.
set -eu
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
'' | */* | .*) die "usage: remove.sh NAME (a directory under $OUT)" ;;
esac
if [ -e "$OUT/$1" ]; then
	rm -rf "${OUT:?}/$1"
	say "removed $OUT/$1"
else
	say "nothing to remove at $OUT/$1"
fi
rmdir "$OUT" 2>/dev/null || true
