#!/usr/bin/env bash
# Step 1 of action.yml: install deployer and set the step output path=BINARY.
#
# INPUT_VERSION set (e.g. 1.4.0 or v1.4.0): download the release archive that
# .goreleaser.yaml builds (deployer_VERSION_OS_ARCH.tar.gz, .zip on Windows)
# from GitHub Releases and check it against the release's checksums.txt.
# INPUT_VERSION empty: go install this action's own source (the ref the
# workflow's `uses:` names), which needs Go on the runner.
set -euo pipefail

repo="${DEPLOYER_RELEASE_REPO:-deployer-dev/deployer}"
# Where releases are downloaded from (a mirror, or file:// in tests).
releases="${DEPLOYER_RELEASES_URL:-https://github.com/$repo/releases/download}"
action_path="${DEPLOYER_ACTION_PATH:?DEPLOYER_ACTION_PATH is not set: run this script from action.yml}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
version="${INPUT_VERSION:-}"
exe=deployer
[ "${RUNNER_OS:-}" = "Windows" ] && exe=deployer.exe

if [ -z "$version" ]; then
	command -v go >/dev/null || {
		echo "::error title=Go not found::the deployer action builds deployer from source when no version is given: add actions/setup-go before it, or set the version input to a release (e.g. version: 1.4.0)"
		exit 1
	}
	dest="$tmp/deployer-src/bin"
	mkdir -p "$dest"
	echo "Building deployer from $action_path with go install"
	(cd "$action_path" && GOBIN="$dest" go install -trimpath ./cmd/deployer)
else
	version="${version#v}"
	case "${RUNNER_OS:-Linux}" in
	Linux) os=linux ;;
	macOS) os=darwin ;;
	Windows) os=windows ;;
	*) echo "::error title=Unsupported runner::RUNNER_OS ${RUNNER_OS} has no deployer release"; exit 1 ;;
	esac
	case "${RUNNER_ARCH:-X64}" in
	X64) arch=amd64 ;;
	ARM64) arch=arm64 ;;
	*) echo "::error title=Unsupported runner::RUNNER_ARCH ${RUNNER_ARCH} has no deployer release"; exit 1 ;;
	esac
	ext=tar.gz
	[ "$os" = windows ] && ext=zip
	archive="deployer_${version}_${os}_${arch}.${ext}"
	base="$releases/v$version"
	dest="$tmp/deployer-$version"
	mkdir -p "$dest"
	echo "Downloading $base/$archive"
	curl -fsSL --retry 3 -o "$dest/$archive" "$base/$archive" || {
		echo "::error title=deployer $version not found::could not download $base/$archive: check the version input against https://github.com/$repo/releases"
		exit 1
	}
	curl -fsSL --retry 3 -o "$dest/checksums.txt" "$base/checksums.txt"
	(cd "$dest" && grep " ${archive}\$" checksums.txt | sha256sum -c -)
	if [ "$ext" = zip ]; then
		(cd "$dest" && unzip -oq "$archive" "$exe")
	else
		tar -xzf "$dest/$archive" -C "$dest" "$exe"
	fi
fi
"$dest/$exe" version
echo "path=$dest/$exe" >>"${GITHUB_OUTPUT:-/dev/null}"
