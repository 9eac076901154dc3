package cli

import (
	"context"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdVersion(t *testing.T) {
	for _, tt := range []struct {
		name    string
		json    bool
		argv    []string
		wantErr string
	}{
		{name: "human"},
		{name: "json", json: true},
		{name: "arguments", argv: []string{"x"}, wantErr: `unknown command "x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			f.JSON = tt.json
			var got *VersionOptions
			err := parse(t, NewCmdVersion(f, func(_ context.Context, o *VersionOptions) error { got = o; return nil }), tt.argv...)
			checkParsed(t, err, got, VersionOptions{JSON: tt.json, Platform: runtime.GOOS + "/" + runtime.GOARCH}, tt.wantErr)
		})
	}
}

func TestRunVersion(t *testing.T) {
	for _, tt := range []struct {
		name    string
		json    bool
		v       app.VersionInfo
		wantOut string
	}{
		{name: "release", v: app.VersionInfo{Version: "v1.2.0", Commit: "abc123", Date: "2026-01-01", Go: "go1.25.0"},
			wantOut: "deployer v1.2.0 (abc123, 2026-01-01) go1.25.0 linux/arm64\n"},
		{name: "commit only", v: app.VersionInfo{Version: "dev", Commit: "abc123-dirty", Go: "go1.25.0"},
			wantOut: "deployer dev (abc123-dirty) go1.25.0 linux/arm64\n"},
		{name: "bare", v: app.VersionInfo{Version: "dev", Go: "go1.25.0"}, wantOut: "deployer dev go1.25.0 linux/arm64\n"},
		{name: "json", json: true, v: app.VersionInfo{Version: "v1.2.0", Commit: "abc123", Date: "2026-01-01", Go: "go1.25.0"},
			wantOut: "{\n  \"version\": \"v1.2.0\",\n  \"commit\": \"abc123\",\n  \"date\": \"2026-01-01\",\n  \"go\": \"go1.25.0\"\n}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := termui.Test("")
			opts := VersionOptions{IO: ios, JSON: tt.json, Platform: "linux/arm64", Version: func() app.VersionInfo { return tt.v }}
			if err := runVersion(context.Background(), &opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

// `deployer --version` prints the line `deployer version` prints, exit 0,
// as terraform and gh users expect.
func TestRootVersionFlagPrintsTheVersionLine(t *testing.T) {
	run := func(argv ...string) string {
		ios, out, errOut := termui.Test("")
		root := NewRootCmd(app.NewFactory(ios))
		root.SetArgs(argv)
		if err := root.Execute(); err != nil {
			t.Fatalf("deployer %v: %v (stderr %q)", argv, err, errOut)
		}
		return out.String()
	}
	flag, cmd := run("--version"), run("version")
	want := app.BuildVersion().Line(runtime.GOOS+"/"+runtime.GOARCH) + "\n"
	if flag != want || cmd != want {
		t.Errorf("deployer --version = %q, deployer version = %q; want both %q", flag, cmd, want)
	}
}
