package awsbackend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseS3URL(t *testing.T) {
	tests := []struct {
		raw     string
		want    S3URL
		wantErr string
	}{
		{raw: "s3://b", want: S3URL{Bucket: "b"}},
		{raw: "s3://b/team/infra/?region=eu-west-1", want: S3URL{Bucket: "b", Prefix: "team/infra", Region: "eu-west-1"}},
		{raw: "s3://b?path_style=true", want: S3URL{Bucket: "b", PathStyle: true}},
		{raw: "s3://b?path_style=maybe", wantErr: "want true or false"},
		{raw: "s3://b?regoin=x", wantErr: `unknown parameter "regoin"`},
		{raw: "s3:///x", wantErr: "want s3://BUCKET"},
	}
	for _, tt := range tests {
		got, err := ParseS3URL(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseS3URL(%q) error = %v, want %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseS3URL(%q): %v", tt.raw, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseS3URL(%q) (-want +got):\n%s", tt.raw, d)
		}
	}
	if got := (S3URL{Bucket: "b", Prefix: "p"}).Key("locks/x.json"); got != "p/locks/x.json" {
		t.Errorf("Key = %q", got)
	}
}

func TestParseDynamoDBURL(t *testing.T) {
	got, err := ParseDynamoDBURL("dynamodb://deployer-state-locks?region=us-east-1")
	if err != nil || got != (DynamoDBURL{Table: "deployer-state-locks", Region: "us-east-1"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"dynamodb://", "dynamodb://t/extra", "dynamodb://t?endpoint=x", "s3://t"} {
		if _, err := ParseDynamoDBURL(bad); err == nil {
			t.Errorf("ParseDynamoDBURL(%q) accepted a bad URL", bad)
		}
	}
}
