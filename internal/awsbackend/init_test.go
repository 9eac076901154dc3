package awsbackend_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
)

func outcomes(r awsbackend.Report) map[string]string {
	m := map[string]string{}
	for _, it := range r.Items {
		m[it.Resource+" "+it.Setting] = it.Outcome
	}
	return m
}

// A state and a lock URL on one bucket set it up once; a second run finds
// everything in place.
func TestInitBucketsCreatesThenReportsExisting(t *testing.T) {
	o := awstest.S3Options(t)
	o.PathStyle = true
	bucket := awstest.Name()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	urls := []string{"s3://" + bucket + "/team", "s3://" + bucket + "/locks"}
	first, err := awsbackend.InitBuckets(ctx, urls, o)
	if err != nil {
		t.Fatalf("InitBuckets: %v", err)
	}
	got := outcomes(first)
	bkt := `s3 bucket "` + bucket + `"`
	for _, k := range []string{bkt + " bucket", bkt + " versioning"} {
		if got[k] != awsbackend.OutcomeCreated {
			t.Errorf("first InitBuckets: %s = %q, want created\n%s", k, got[k], first)
		}
	}
	if n := strings.Count(first.String(), bkt+": bucket:"); n != 1 {
		t.Errorf("the bucket of two URLs was set up %d times:\n%s", n, first)
	}

	second, err := awsbackend.InitBuckets(ctx, urls, o)
	if err != nil {
		t.Fatalf("second InitBuckets: %v", err)
	}
	for k, v := range outcomes(second) {
		if v == awsbackend.OutcomeCreated {
			t.Errorf("second InitBuckets created %s again:\n%s", k, second)
		}
	}
	if !strings.Contains(second.String(), bkt+": versioning: already existed") {
		t.Errorf("second report lacks existing versioning:\n%s", second)
	}
}
