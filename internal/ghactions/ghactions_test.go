package ghactions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetect(t *testing.T) {
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_STEP_SUMMARY": "/r/_temp/_runner_file_commands/step_summary_1",
		"GITHUB_OUTPUT": "/r/_temp/_runner_file_commands/set_output_1", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": "acme/infra", "GITHUB_RUN_ID": "1658821493",
	}
	got := Detect(func(k string) string { return env[k] })
	want := Env{Actions: true, CI: true, StepSummary: env["GITHUB_STEP_SUMMARY"], Output: env["GITHUB_OUTPUT"],
		ServerURL: "https://github.com", Repository: "acme/infra", RunID: "1658821493"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Detect (-want +got):\n%s", diff)
	}
	if got := Detect(func(string) string { return "" }); got != (Env{}) {
		t.Errorf("Detect outside CI = %+v, want zero", got)
	}
	if got := Detect(func(k string) string { return map[string]string{"CI": "true"}[k] }); !got.CI || got.Actions {
		t.Errorf("Detect on another CI = %+v, want CI only", got)
	}
}

func TestAnnotationEscapes(t *testing.T) {
	for _, tc := range []struct{ level, title, msg, want string }{
		{Error, "", "plain", "::error::plain\n"},
		{Error, "Component app/build failed", "exit status 1", "::error title=Component app/build failed::exit status 1\n"},
		{Notice, "Waiting for lock stack:a:env:b", "held by x, since 10:00", "::notice title=Waiting for lock stack%3Aa%3Aenv%3Ab::held by x, since 10:00\n"},
		{Warning, "100% sure", "line one\nline two\r\n50%", "::warning title=100%25 sure::line one%0Aline two%0A50%25\n"},
		// Data in an annotation is sanitised: no control character, no command of its own.
		{Error, "held by x\x1b[2J", "a\rb\n::warning::c", "::error title=held by x\\x1b[2J::a\\rb%0A\\::warning::c\n"},
	} {
		if got := Annotation(tc.level, tc.title, tc.msg); got != tc.want {
			t.Errorf("Annotation(%q, %q, %q) = %q, want %q", tc.level, tc.title, tc.msg, got, tc.want)
		}
	}
}

func TestWriteOutputsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "set_output")
	if err := os.WriteFile(path, []byte("earlier=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutputs(path, Output{"changes", "true"}, Output{"serial", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutputs(path, Output{"note", "two\nlines"}, Output{"tricky", "a\nghadelimiter_deployer\nb"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "earlier=1\nchanges=true\nserial=3\n" +
		"note<<ghadelimiter_deployer\ntwo\nlines\nghadelimiter_deployer\n" +
		"tricky<<ghadelimiter_deployer_0\na\nghadelimiter_deployer\nb\nghadelimiter_deployer_0\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("GITHUB_OUTPUT (-want +got):\n%s", diff)
	}
}

func TestWriteOutputsToAMissingDirectory(t *testing.T) {
	err := WriteOutputs(filepath.Join(t.TempDir(), "no", "such"), Output{"a", "b"})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("GITHUB_OUTPUT")) {
		t.Fatalf("WriteOutputs: %v, want an error naming GITHUB_OUTPUT", err)
	}
}

func TestGroupWriter(t *testing.T) {
	var out bytes.Buffer
	g := NewGroupWriter(&out)
	for _, w := range []string{
		"Acquired lock stack:q:env:dev\n",
		"[app/build] create: sh build.sh\n[app/build] built",
		" it\n",
		"[app/check] create: sh check.sh\n",
		"[app/build] create done in 5ms\n",
		"[not a component] x\n",
		"[docs/site] create: sh site.sh\n",
		"[docs/site] partial",
	} {
		if _, err := g.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	want := "Acquired lock stack:q:env:dev\n" +
		"::group::app/build\n[app/build] create: sh build.sh\n[app/build] built it\n" +
		"::endgroup::\n::group::app/check\n[app/check] create: sh check.sh\n" +
		"::endgroup::\n::group::app/build\n[app/build] create done in 5ms\n" +
		"::endgroup::\n[not a component] x\n" +
		"::group::docs/site\n[docs/site] create: sh site.sh\n[docs/site] partial\n::endgroup::\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("grouped log (-want +got):\n%s", diff)
	}
}
