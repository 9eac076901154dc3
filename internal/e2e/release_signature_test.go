//go:build unix

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// A release is signed keyless by its workflow (docs/github-actions.md#how-a-release-is-verified);
// offline, the tests sign with a throwaway cosign key pair instead, and the
// action's install step verifies with its public key
// (DEPLOYER_RELEASE_PUBLIC_KEY). cosign is the real one, on both sides.

// releaseKey is a cosign key pair with an empty password.
type releaseKey struct {
	cosign, private, public string // cosign's path, the key files
}

func newReleaseKey(t *testing.T) releaseKey {
	t.Helper()
	k := releaseKey{cosign: testenv.Require(t, testenv.Cosign, "cosign")}
	prefix := filepath.Join(t.TempDir(), "release")
	k.cosignRun(t, "generate-key-pair", "--output-key-prefix", prefix)
	k.private, k.public = prefix+".key", prefix+".pub"
	return k
}

func (k releaseKey) cosignRun(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(k.cosign, args...)
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// sign writes the Sigstore bundle of file beside it (FILE.sigstore.json),
// as .goreleaser.yaml's signs do for checksums.txt, with the key and no
// transparency log (offline).
func (k releaseKey) sign(t *testing.T, file string) {
	t.Helper()
	k.cosignRun(t, "sign-blob", "--key", k.private, "--tlog-upload=false", "--bundle="+file+".sigstore.json", file, "--yes")
}

// publicKey returns the PEM of the public key.
func (k releaseKey) publicKey(t *testing.T) string {
	t.Helper()
	pub, err := os.ReadFile(k.public)
	if err != nil {
		t.Fatal(err)
	}
	return string(pub)
}

// release is a directory laid out as GitHub Releases serve deployer
// VERSION: vVERSION/ARCHIVE, vVERSION/checksums.txt and its signature
// vVERSION/checksums.txt.sigstore.json.
type release struct {
	mirror, archive, checksums string // the mirror's directory, the archive's and checksums.txt's paths
	key                        releaseKey
}

// installEnv is the environment that points the install step at the
// release and at the key it is signed with.
func (r release) installEnv(t *testing.T) []string {
	return []string{"DEPLOYER_RELEASES_URL=file://" + r.mirror, "DEPLOYER_RELEASE_PUBLIC_KEY=" + r.key.publicKey(t)}
}

// actArgs are act's arguments for a workflow that installs the release
// with the action: the install step's environment, and cosign installed by
// a stand-in of the cosign-installer action that action.yml pins (act
// cannot download it offline) which puts this cosign on PATH.
func (r release) actArgs(t *testing.T) []string {
	t.Helper()
	action, err := os.ReadFile(filepath.Join(actionPath(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`uses: (sigstore/cosign-installer@[0-9a-f]{40})`).FindSubmatch(action)
	if m == nil {
		t.Fatal("action.yml does not install cosign with sigstore/cosign-installer pinned by commit")
	}
	dir := t.TempDir()
	standIn := fmt.Sprintf("name: cosign-installer\ninputs: {cosign-release: {required: false}}\nruns:\n  using: composite\n  steps:\n"+
		"    - shell: bash\n      run: echo %q >> \"$GITHUB_PATH\"\n", filepath.Dir(r.key.cosign))
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), []byte(standIn), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--local-repository", string(m[1]) + "=" + dir}
	for _, kv := range r.installEnv(t) {
		args = append(args, "--env", kv)
	}
	return args
}

// install runs the action's install step (action.yml's first step, after
// cosign's install) for version with extra environment, with cosign on
// PATH. It returns the step's log, its outputs, whether the binary is in
// the runner's temporary directory, and its error.
func (r release) install(t *testing.T, version string, env ...string) (out, outputs string, binary bool, err error) {
	t.Helper()
	run := newRunner(t, t.TempDir())
	cmd := exec.Command("bash", filepath.Join(actionPath(t), "scripts", "github-action", "install.sh"))
	cmd.Env = append(run.env(nil), "INPUT_VERSION="+version)
	cmd.Env = append(cmd.Env, r.installEnv(t)...)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(r.key.cosign)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	o, _ := os.ReadFile(run.output)
	_, statErr := os.Stat(filepath.Join(run.temp, "deployer-"+strings.TrimPrefix(version, "v"), "deployer"))
	return string(b), string(o), statErr == nil, err
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The install step verifies checksums.txt's signature before it trusts
// any checksum in it: a release whose archive and checksums.txt were both
// replaced (the checksum matches, the signature does not) is refused, as
// are a release signed by another key, one without its signature, an
// archive that fails its checksum, and any release when cosign is missing; each with an annotation saying why, and
// with no binary installed and no path output.
func TestActionInstallVerifiesTheReleaseSignature(t *testing.T) {
	rel := releaseMirror(t, "1.2.3", "amd64")
	out, installed, _, err := rel.install(t, "1.2.3")
	if err != nil || !strings.HasPrefix(installed, "path=") {
		t.Fatalf("install of a signed release: %v, outputs %q\n%s", err, installed, out)
	}
	if !strings.Contains(out, "Verified OK") {
		t.Errorf("the install step should say it verified the signature:\n%s", out)
	}

	refused := func(what, wantErr string, env ...string) {
		t.Helper()
		out, installed, binary, err := rel.install(t, "1.2.3", env...)
		if err == nil || installed != "" || binary {
			t.Errorf("%s: the install step installed it (err %v, outputs %q, binary left: %v):\n%s", what, err, installed, binary, out)
			return
		}
		if !strings.Contains(out, wantErr) {
			t.Errorf("%s: the output lacks %q:\n%s", what, wantErr, out)
		}
	}

	// No cosign on PATH: no install without the check.
	noCosign := t.TempDir()
	for _, tool := range []string{"curl", "tar", "gzip", "sha256sum", "awk", "mktemp", "rm", "mkdir", "mv"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(noCosign, tool)); err != nil {
			t.Fatal(err)
		}
	}
	refused("a runner without cosign", "::error title=deployer 1.2.3 signature not verified::cosign not found", "PATH="+noCosign)

	checksums, err := os.ReadFile(rel.checksums)
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(rel.archive)
	if err != nil {
		t.Fatal(err)
	}
	// Another key: the good signature no longer matches the key the step trusts.
	other := newReleaseKey(t)
	refused("a release checked against another key", "::error title=deployer 1.2.3 signature not verified::",
		"DEPLOYER_RELEASE_PUBLIC_KEY="+other.publicKey(t))

	// Another deployer in the archive, and a checksums.txt that matches it.
	evil := t.TempDir()
	writeFile(t, filepath.Join(evil, "deployer"), "#!/bin/sh\necho not deployer\n")
	script := fmt.Sprintf("chmod +x %s/deployer && tar -czf %s -C %s deployer && cd %s && sha256sum %s > checksums.txt",
		evil, rel.archive, evil, filepath.Dir(rel.archive), filepath.Base(rel.archive))
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	refused("a tampered checksums.txt", "::error title=deployer 1.2.3 signature not verified::")

	// The signed checksums.txt back, the archive still replaced.
	writeFile(t, rel.checksums, string(checksums))
	refused("a tampered archive", "::error title=deployer 1.2.3 checksum mismatch::")

	// No signature at all.
	writeFile(t, rel.archive, string(archive))
	if err := os.Remove(rel.checksums + ".sigstore.json"); err != nil {
		t.Fatal(err)
	}
	refused("a release without a signature", "::error title=deployer 1.2.3 not signed::")
}
