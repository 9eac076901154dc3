package postgres_test

import (
	"context"
	"testing"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/postgres"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// A state write whose COMMIT reached PostgreSQL but whose acknowledgement was
// lost (the connection broke) is our write, recognised by reading the row
// back: Save succeeds once and the state loads at the new serial
// (docs/backends.md, "Lost replies").
func TestLostCommitAckIsOurs(t *testing.T) {
	url, proxy := faulttest.ViaTCP(t, pgschematest.Migrated(t))
	store := statestore.New(open(t, url, postgres.Options{}))
	ctx := context.Background()
	var head statestore.Head
	for serial := int64(1); serial <= 2; serial++ {
		st := storetest.SeedState("shop", "dev")
		if serial > 1 {
			prev, _, err := store.Load(ctx, "shop", "dev")
			if err != nil {
				t.Fatal(err)
			}
			st.Lineage = prev.Lineage
		}
		st.Serial = serial
		proxy.DropNext("commit\x00")
		var err error
		if head, err = store.Save(ctx, st, head, nil); err != nil {
			t.Fatalf("Save of serial %d with its COMMIT acknowledgement lost: %v (want our own write recognised)", serial, err)
		}
		if n := proxy.Armed(); n != 0 {
			t.Fatalf("serial %d: the fault never fired", serial)
		}
		got, _, err := store.Load(ctx, "shop", "dev")
		if err != nil || got.Serial != serial {
			t.Fatalf("Load after serial %d: %v, %v", serial, got, err)
		}
	}
	hist, err := store.History(ctx, "shop", "dev", head, 0)
	if err != nil || len(hist) != 2 {
		t.Errorf("history = %+v, %v; want one snapshot per serial (2)", hist, err)
	}
}
