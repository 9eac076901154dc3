//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// The release that .goreleaser.yaml makes is what the action's install
// step downloads: goreleaser makes a snapshot release of this repository
// (for this machine's platform only, and with the binary the e2e tests
// built instead of compiling it again, to keep the test short: the archive,
// checksum and file names come from the unchanged templates), and
// install.sh, pointed at it as a release mirror, finds the archive,
// verifies checksums.txt's signature, the archive against it, and runs the
// binary. goreleaser signs through the signs: of .goreleaser.yaml, with a
// test key added in place of the release workflow's keyless identity.
// .goreleaser.yaml also passes goreleaser check.
func TestReleaseArchivesAreWhatTheActionInstalls(t *testing.T) {
	goreleaser := testenv.Require(t, testenv.Goreleaser, "goreleaser")
	key := newReleaseKey(t)
	testenv.RequirePlatform(t, runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"),
		"the test builds the release of this platform; "+runtime.GOOS+"/"+runtime.GOARCH+" has none")
	root := actionPath(t)
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(goreleaser, "check", "--config", filepath.Join(root, ".goreleaser.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
	cfg := string(data)
	for old, repl := range map[string]string{
		"goos: [linux, darwin, windows]": "goos: [linux]",
		"goarch: [amd64, arm64]":         "goarch: [" + runtime.GOARCH + "]",
		"\nsboms:":                       "\nsnapshot:\n  version_template: 1.2.3-test\nsboms:",
		`args: ["sign-blob", `:           `args: ["sign-blob", "--key=` + key.private + `", "--tlog-upload=false", `,
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf(".goreleaser.yaml no longer has %q: update this test with it", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	// goreleaser runs `GOBINARY build ... -o OUT ./cmd/deployer`; this one
	// copies the binary already built, and passes anything else to go.
	fakeGo := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/sh\nif [ \"$1\" = build ]; then\n  while [ $# -gt 0 ]; do [ \"$1\" = -o ] && { cp " + bin + " \"$2\"; exit; }; shift; done\n  exit 1\nfi\nexec go \"$@\"\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg, "    binary: deployer\n") {
		t.Fatal(".goreleaser.yaml no longer has \"    binary: deployer\": update this test with it")
	}
	cfg = strings.Replace(cfg, "    binary: deployer\n", "    binary: deployer\n    gobinary: "+fakeGo+"\n", 1)
	dist := filepath.Join(t.TempDir(), "dist")
	cfg += "dist: " + dist + "\n"
	cfgPath := filepath.Join(t.TempDir(), "goreleaser.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// syft (the SBOM) is installed by the release workflow only.
	cmd := exec.Command(goreleaser, "release", "--snapshot", "--clean", "--skip=sbom", "--parallelism=1", "--config", cfgPath)
	cmd.Dir = root
	path := "PATH=" + filepath.Dir(key.cosign) + string(os.PathListSeparator) + os.Getenv("PATH")
	cmd.Env = append(os.Environ(), path, "COSIGN_PASSWORD=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s", err, out)
	}

	// dist/ is the release's download directory: mirror/v1.2.3-test.
	mirror := t.TempDir()
	if err := os.Symlink(dist, filepath.Join(mirror, "v1.2.3-test")); err != nil {
		t.Fatal(err)
	}
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	r := newRunner(t, t.TempDir())
	install := exec.Command("bash", filepath.Join(root, "scripts", "github-action", "install.sh"))
	install.Env = append(r.env(nil), "INPUT_VERSION=v1.2.3-test", "RUNNER_ARCH="+arch, "DEPLOYER_RELEASES_URL=file://"+mirror,
		"DEPLOYER_RELEASE_PUBLIC_KEY="+key.publicKey(t), path)
	out, err := install.CombinedOutput()
	if err != nil {
		entries, _ := os.ReadDir(dist)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("install.sh did not install the snapshot release: %v\n%s\ndist holds: %s", err, out, strings.Join(names, " "))
	}
	if !strings.Contains(string(out), "deployer_1.2.3-test_linux_"+runtime.GOARCH+".tar.gz") || !strings.Contains(string(out), "Verified OK") ||
		!strings.Contains(string(out), ": OK") || !strings.Contains(string(out), "deployer ") {
		t.Errorf("install.sh should download the archive, verify checksums.txt's signature and the archive's checksum and run `deployer version`:\n%s", out)
	}
}
