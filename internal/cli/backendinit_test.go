package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdBackendInit(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		wantErr string
	}{
		{argv: nil},
		{argv: []string{"extra"}, wantErr: `unknown command "extra"`},
		{argv: []string{"--bucket", "b"}, wantErr: "unknown flag: --bucket"},
	} {
		io, _, _ := termui.Test("")
		f := app.NewFactory(io)
		var got *BackendInitOptions
		err := parse(t, NewCmdBackendInit(f, func(_ context.Context, o *BackendInitOptions) error { got = o; return nil }), c.argv...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want one saying %q", c.argv, err, c.wantErr)
			}
			if got != nil {
				t.Errorf("%v: run called despite the error", c.argv)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if got == nil || got.IO != f.IO || got.Init == nil {
			t.Errorf("%v: IO and Init must be bound from the app.Factory: %+v", c.argv, got)
		}
	}
}

func TestRunBackendInit(t *testing.T) {
	created := []string{
		`s3 bucket "b": bucket: created`,
		`s3 bucket "b": versioning: created`,
		`dynamodb table "t": table: created (PAY_PER_REQUEST, hash key lockKey)`,
	}
	for _, c := range []struct {
		name    string
		lines   []string
		err     error
		wantOut string
		wantErr string
	}{
		{name: "created", lines: created, wantOut: strings.Join(created, "\n") + "\n"},
		{name: "nothing to create", lines: []string{"file://.deployer: nothing to create (made on first use)"},
			wantOut: "file://.deployer: nothing to create (made on first use)\n"},
		{name: "stops at an error, after what it did", lines: created[:1], err: errors.New(`enable versioning: AWS denied s3 bucket "b"`),
			wantOut: created[0] + "\n", wantErr: `enable versioning: AWS denied s3 bucket "b"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, out, errOut := termui.Test("")
			opts := &BackendInitOptions{IO: io, Init: func(context.Context) ([]string, error) { return c.lines, c.err }}
			err := runBackendInit(context.Background(), opts)
			if got := out.String(); got != c.wantOut {
				t.Errorf("stdout %q, want %q", got, c.wantOut)
			}
			if got := errOut.String(); got != "" {
				t.Errorf("stderr %q, want nothing", got)
			}
			if (err == nil) != (c.wantErr == "") || (err != nil && err.Error() != c.wantErr) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
		})
	}
}

// The bound use case reads deployer.yaml's backends through the registry.
func TestBackendInitOfTheConfiguredBackends(t *testing.T) {
	cfg := shopProject(t)
	stdout, _, err := runRoot(t, "", false, "--config", cfg, "backend", "init")
	if want := "file://.deployer: nothing to create (made on first use)\n"; err != nil || stdout != want {
		t.Errorf("backend init = %q, %v; want %q", stdout, err, want)
	}
}
