#!/bin/sh
# One Command component of the many-stacks example (docs/command-kind.md).
# Its output `version` is its own config version followed by the versions it
# read from other stacks (through StackReference components) and from its
# own dependencies, so a new version in `network` visibly flows to every
# stack that reads it. It writes out/{environment}/{stack}.{component}.json.
set -eu
name=$(printf '%s' "$DEPLOYER_COMPONENT" | tr / .)
file="../out/$DEPLOYER_ENVIRONMENT/$DEPLOYER_STACK.$name.json"
if [ "$DEPLOYER_ACTION" = delete ]; then
	rm -f "$file"
	echo "removed $file"
	exit 0
fi
# config.reads lists the variables (DEPLOYER_DEP_...) holding the versions
# this component reads: they arrive as DEPLOYER_CONFIG_READS_0, _1, ...
read="" i=0
while var=$(printenv "DEPLOYER_CONFIG_READS_$i"); do
	read="$read${read:+ }$(printenv "$var" || echo "?")"
	i=$((i + 1))
done
version="$DEPLOYER_CONFIG_VERSION"
[ -n "$read" ] && version="$version [$read]"
mkdir -p "$(dirname "$file")"
printf '{"version":"%s","environment":"%s"}\n' "$version" "$DEPLOYER_ENVIRONMENT" > "$file"
printf '{"version":"%s"}\n' "$version" > "$DEPLOYER_OUTPUTS"
echo "$DEPLOYER_STACK $DEPLOYER_COMPONENT: $DEPLOYER_ACTION version $version"
