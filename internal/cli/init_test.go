package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdInit(t *testing.T) {
	tests := []struct {
		name       string
		configPath string // --config, as the root binds it
		argv       []string
		want       InitOptions
		wantErr    string
	}{
		{name: "default path", want: InitOptions{Path: "deployer.yaml"}},
		{name: "--config and --force", configPath: "infra/deployer.yaml", argv: []string{"--force"}, want: InitOptions{Path: "infra/deployer.yaml", Force: true}},
		{name: "arguments", argv: []string{"x"}, wantErr: `unknown command "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			f.ConfigPath = tt.configPath
			var got *InitOptions
			err := parse(t, NewCmdInit(f, func(_ context.Context, o *InitOptions) error { got = o; return nil }), tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestRunInit(t *testing.T) {
	full := errors.New("write deployer.yaml: no space left on device")
	tests := []struct {
		name       string
		opts       InitOptions
		initErr    error
		wantErrOut string
		wantErr    error
	}{
		{name: "written", opts: InitOptions{Path: "deployer.yaml"}, wantErrOut: "Wrote deployer.yaml. Next: deployer plan -e dev\n"},
		{name: "forced", opts: InitOptions{Path: "infra/deployer.yaml", Force: true}, wantErrOut: "Wrote infra/deployer.yaml. Next: deployer plan -e dev\n"},
		{name: "exists", opts: InitOptions{Path: "deployer.yaml"}, initErr: fmt.Errorf("deployer.yaml: %w", deploy.ErrConfigExists),
			wantErr: errors.New("deployer.yaml already exists: edit it, or pass --force to overwrite it")},
		{name: "write fails", opts: InitOptions{Path: "deployer.yaml"}, initErr: full, wantErr: full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := termui.Test("")
			opts := tt.opts
			opts.IO = ios
			opts.Init = func(path string, force bool) error {
				if path != tt.opts.Path || force != tt.opts.Force {
					t.Errorf("Init(%q, %v)", path, force)
				}
				return tt.initErr
			}
			err := runInit(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if out.Len() > 0 {
				t.Errorf("stdout: %q", out)
			}
			if diff := cmp.Diff(tt.wantErrOut, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
