#!/usr/bin/env bash
# Step 1 of action.yml: install deployer and set the step output path=BINARY.
#
# INPUT_VERSION set (e.g. 1.4.0 or v1.4.0): download the release archive that
# .goreleaser.yaml builds (deployer_VERSION_OS_ARCH.tar.gz, .zip on Windows)
# from GitHub Releases, verify the signature of the release's checksums.txt
# (checksums.txt.sigstore.json) with cosign, which action.yml installs first,
# then check the archive against it (docs/github-actions.md#how-a-release-is-verified).
# Signed keyless by the release workflow on the version's tag, or, with
# DEPLOYER_RELEASE_PUBLIC_KEY (a PEM public key), by that key only.
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

# verify_signature verifies $stage/checksums.txt against its Sigstore bundle:
# keyless, signed by the release workflow of this repository on tag
# v$version, or by the key in DEPLOYER_RELEASE_PUBLIC_KEY when it is set.
verify_signature() {
	local signer who
	if [ -n "${DEPLOYER_RELEASE_PUBLIC_KEY:-}" ]; then
		printf '%s\n' "$DEPLOYER_RELEASE_PUBLIC_KEY" >"$stage/release.pub"
		# A key-signed bundle has no transparency-log entry: the key is what is trusted.
		signer=(--key "$stage/release.pub" --insecure-ignore-tlog=true)
		who="the key in DEPLOYER_RELEASE_PUBLIC_KEY"
	else
		who="https://github.com/$repo/.github/workflows/release.yml@refs/tags/v$version"
		signer=(--certificate-identity "$who" --certificate-oidc-issuer https://token.actions.githubusercontent.com)
	fi
	command -v cosign >/dev/null ||
		refuse "signature not verified" "cosign not found: it verifies the release's signature (action.yml installs it before this step)"
	echo "Verifying that checksums.txt is signed by $who"
	(cd "$stage" && cosign verify-blob "${signer[@]}" --bundle checksums.txt.sigstore.json checksums.txt) ||
		refuse "signature not verified" "cosign could not verify that checksums.txt of $base is signed by $who (its error is above): the release is not installed"
}

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
	# Everything is downloaded and checked here; only a verified binary
	# moves to $dest. A refused release leaves nothing.
	mkdir -p "$tmp"
	stage=$(mktemp -d "$tmp/deployer-$version.download.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	refuse() {
		echo "::error title=deployer $version $1::$2"
		exit 1
	}
	download() { curl -fsSL --retry 3 -o "$stage/$1" "$base/$1"; }
	echo "Downloading $base/$archive"
	download "$archive" ||
		refuse "not found" "could not download $base/$archive: check the version input against https://github.com/$repo/releases"
	download checksums.txt || refuse "not found" "could not download $base/checksums.txt"
	download checksums.txt.sigstore.json ||
		refuse "not signed" "could not download $base/checksums.txt.sigstore.json, the signature of checksums.txt: the release is not installed"
	verify_signature
	(cd "$stage" && awk -v f="$archive" '$2 == f || $2 == "*" f' checksums.txt | sha256sum -c -) ||
		refuse "checksum mismatch" "$archive does not match its SHA-256 in the signed checksums.txt: the release is not installed"
	if [ "$ext" = zip ]; then
		(cd "$stage" && unzip -oq "$archive" "$exe")
	else
		tar -xzf "$stage/$archive" -C "$stage" "$exe"
	fi
	mkdir -p "$dest"
	mv -f "$stage/$exe" "$dest/$exe"
fi
"$dest/$exe" version
echo "path=$dest/$exe" >>"${GITHUB_OUTPUT:-/dev/null}"
