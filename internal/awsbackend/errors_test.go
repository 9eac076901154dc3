package awsbackend_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	s3state "github.com/deployer-dev/deployer/internal/statestore/s3"
)

func readState(t *testing.T, raw string, o awsbackend.Options) error {
	t.Helper()
	b, err := s3state.Open(context.Background(), raw, o)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = b.Read(context.Background(), "s", "e")
	return err
}

func wantAll(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestWrongCredentialsNameTheFix(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	o.AccessKeyID, o.SecretAccessKey = "not-a-key", "not-a-secret"
	wantAll(t, readState(t, "s3://"+bucket, o), `s3 bucket "`+bucket+`"`, "credentials", "AWS_ACCESS_KEY_ID")
}

func TestMissingBucketNamesInit(t *testing.T) {
	o := awstest.S3Options(t)
	wantAll(t, readState(t, "s3://no-such-bucket-"+strings.ToLower(awstest.Name()[14:]), o), "not found", "deployer backend init")
}

func TestNoNetworkNamesEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	o := awsbackend.Options{S3Endpoint: "http://" + addr, PathStyle: true, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}
	err = readState(t, "s3://unreachable-bucket", o)
	wantAll(t, err, `cannot reach s3 bucket "unreachable-bucket"`, "AWS_ENDPOINT_URL_S3")
}

func TestMissingRegion(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_PROFILE", "")
	_, err := s3state.Open(context.Background(), "s3://b", awsbackend.Options{})
	wantAll(t, err, "no AWS region", "?region=")
}
