package s3_test

import (
	"context"
	"testing"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// A state write whose snapshot PUT or state.json PUT reply is lost (MinIO
// applied it, the connection closed, the SDK retried and got 412) is our own
// write, recognised by reading the object back: Save succeeds once, the state
// loads at the new serial, and history holds one snapshot per serial
// (docs/backends.md, "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	proxy := faulttest.NewReplyDropper(t, o.S3Endpoint)
	o.S3Endpoint = proxy.URL
	store := statestore.New(open(t, "s3://"+bucket, o))
	ctx := context.Background()
	const stack, env = "shop", "dev"

	var head statestore.Head
	for _, step := range []struct {
		serial int64
		lose   []string // object key parts whose PUT reply is dropped
	}{
		{1, []string{"/history/", "/state.json"}}, // first write: If-None-Match on both
		{2, []string{"/history/"}},
		{3, []string{"/state.json"}}, // If-Match on state.json
		{4, []string{"/history/", "/state.json"}},
	} {
		st := storetest.SeedState(stack, env)
		if !head.IsZero() {
			prev, _, err := store.Load(ctx, stack, env)
			if err != nil {
				t.Fatal(err)
			}
			st.Lineage = prev.Lineage
		}
		st.Serial = step.serial
		for _, part := range step.lose {
			proxy.DropNext(faulttest.S3Put(part))
		}
		var err error
		head, err = store.Save(ctx, st, head, nil)
		if err != nil {
			t.Fatalf("Save of serial %d with the replies of %v lost: %v (want our own write recognised)", step.serial, step.lose, err)
		}
		if n := proxy.Armed(); n != 0 {
			t.Fatalf("serial %d: %d faults never fired; dropped: %v", step.serial, n, proxy.Dropped())
		}
		got, _, err := store.Load(ctx, stack, env)
		if err != nil || got.Serial != step.serial {
			t.Fatalf("Load after serial %d: serial %v, %v", step.serial, got, err)
		}
	}
	hist, err := store.History(ctx, stack, env, head, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 {
		t.Errorf("history has %d snapshots, want one per serial (4): %+v", len(hist), hist)
	}
	t.Logf("dropped replies: %v", proxy.Dropped())
}
