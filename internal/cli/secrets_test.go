package cli

import (
	"context"
	"testing"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestSecretsFlags(t *testing.T) {
	io, _, _ := termui.Test("")
	f := app.NewFactory(io)
	var show *StateShowOptions
	cmd := NewCmdStateShow(f, func(_ context.Context, o *StateShowOptions) error { show = o; return nil })
	if err := parse(t, cmd, "-e", "prod", "--show-secrets", "--yes", "--serial", "3"); err != nil {
		t.Fatal(err)
	}
	if !show.ShowSecrets || !show.Yes || show.Serial != 3 {
		t.Errorf("state show flags: %+v", show)
	}
}

func TestStreamsMaskKnownSecrets(t *testing.T) {
	io, out, errOut := termui.Test("")
	f := app.NewFactory(io)
	f.Masker.Add("s3cr3t-value")
	_, _ = f.IO.Out.Write([]byte("out s3cr3t-value\n"))
	_, _ = f.IO.ErrOut.Write([]byte("err s3cr3t-value\n"))
	_, _ = f.RawOut.Write([]byte("raw s3cr3t-value\n"))
	if out.String() != "out ***\nraw s3cr3t-value\n" || errOut.String() != "err ***\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
