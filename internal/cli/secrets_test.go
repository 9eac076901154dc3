package cli

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSecretsFlags(t *testing.T) {
	io, _, _ := Test("")
	f := NewFactory(io)
	var rot *SecretsRotateOptions
	cmd := NewCmdSecretsRotate(f, func(_ context.Context, _ *Factory, o *SecretsRotateOptions) error { rot = o; return nil })
	if err := parse(t, cmd, "-e", "prod", "--new-provider", "awskms://alias/x?region=eu-west-1", "--lock-timeout", "1m"); err != nil {
		t.Fatal(err)
	}
	want := SecretsRotateOptions{Target: targetFlags{Env: "prod"}, NewProvider: "awskms://alias/x?region=eu-west-1", LockTimeout: time.Minute}
	if diff := cmp.Diff(want, *rot, cmp.AllowUnexported(SecretsRotateOptions{})); diff != "" {
		t.Errorf("secrets rotate flags (-want +got):\n%s", diff)
	}
	var show *StateShowOptions
	cmd = NewCmdStateShow(f, func(_ context.Context, o *StateShowOptions) error { show = o; return nil })
	if err := parse(t, cmd, "-e", "prod", "--show-secrets", "--yes", "--serial", "3"); err != nil {
		t.Fatal(err)
	}
	if !show.ShowSecrets || !show.Yes || show.Serial != 3 {
		t.Errorf("state show flags: %+v", show)
	}
}

func TestStreamsMaskKnownSecrets(t *testing.T) {
	io, out, errOut := Test("")
	f := NewFactory(io)
	f.Masker().Add("s3cr3t-value")
	_, _ = f.IO.Out.Write([]byte("out s3cr3t-value\n"))
	_, _ = f.IO.ErrOut.Write([]byte("err s3cr3t-value\n"))
	_, _ = f.rawOut.Write([]byte("raw s3cr3t-value\n"))
	if out.String() != "out ***\nraw s3cr3t-value\n" || errOut.String() != "err ***\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
