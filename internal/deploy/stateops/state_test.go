package stateops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// stateDir returns a Store on a file state backend in a temp dir.
func stateDir(t *testing.T) (string, *statestore.Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".deployer")
	b, err := filestate.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return dir, statestore.New(b, statestore.WithClock(clock))
}

// saved writes serials 1..n of shop/dev and returns the last.
func saved(t *testing.T, store *statestore.Store, n int) *statestore.State {
	t.Helper()
	st := statestore.NewState("shop", "dev")
	head := statestore.Head{}
	for i := 1; i <= n; i++ {
		st.Serial = int64(i)
		st.Outputs = map[string]any{"n": float64(i)}
		var err error
		if head, err = store.Save(context.Background(), st, head, nil); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestShowState(t *testing.T) {
	ctx := context.Background()
	_, store := stateDir(t)
	tg := core.Target{Stack: "shop", Env: "dev"}
	loc := store.Location("shop", "dev")

	_, err := stateops.ShowState(ctx, stateops.StateDeps{Store: store}, stateops.ShowStateRequest{Target: tg})
	want := "no state for shop/dev in " + loc + ": deploy it first (deployer deploy -s shop -e dev)"
	if err == nil || err.Error() != want {
		t.Fatalf("state show without state: %v, want %q", err, want)
	}

	saved(t, store, 2)
	res, err := stateops.ShowState(ctx, stateops.StateDeps{Store: store}, stateops.ShowStateRequest{Target: tg})
	if err != nil || res.State.Serial != 2 || res.Location != loc {
		t.Fatalf("state show: %+v, %v", res, err)
	}
	res, err = stateops.ShowState(ctx, stateops.StateDeps{Store: store}, stateops.ShowStateRequest{Target: tg, Serial: 1})
	if err != nil || res.State.Serial != 1 || fmt.Sprint(res.State.Outputs["n"]) != "1" {
		t.Fatalf("state show --serial 1: %+v, %v", res, err)
	}

	// A reveal of secret values is confirmed, then audited; a declined one is not.
	var audit bytes.Buffer
	deps := stateops.StateDeps{Store: store, Audit: func() (*slog.Logger, error) { return slog.New(slog.NewJSONHandler(&audit, nil)), nil }}
	_, err = stateops.ShowState(ctx, deps, stateops.ShowStateRequest{Target: tg, ShowSecrets: true, Confirm: func(core.Target) error { return errors.New("declined") }})
	if err == nil || err.Error() != "declined" || audit.Len() != 0 {
		t.Fatalf("a declined reveal: %v, audit %q", err, audit.String())
	}
	if _, err := stateops.ShowState(ctx, deps, stateops.ShowStateRequest{Target: tg}); err != nil || audit.Len() != 0 {
		t.Fatalf("state show without secrets audits nothing: %v, %q", err, audit.String())
	}
	var asked core.Target
	_, err = stateops.ShowState(ctx, deps, stateops.ShowStateRequest{Target: tg, Serial: 1, ShowSecrets: true, Confirm: func(t core.Target) error { asked = t; return nil }})
	if err != nil || asked != tg {
		t.Fatalf("reveal: %v (asked about %+v)", err, asked)
	}
	for _, want := range []string{`"msg":"state.secrets_shown"`, `"stack":"shop"`, `"environment":"dev"`, `"serial":1`} {
		if !strings.Contains(audit.String(), want) {
			t.Errorf("audit log lacks %s:\n%s", want, audit.String())
		}
	}
}

func TestPushFile(t *testing.T) {
	ctx := context.Background()
	dir, store := stateDir(t)
	_, lb := lockDir(t)
	m := lockmgr.NewManager(lb, lockmgr.Options{Now: clock})
	tg := core.Target{Stack: "shop", Env: "dev"}
	st := saved(t, store, 1)

	// The file a failed state write leaves: the next state, not yet
	// written, naming the state it was written from.
	cur, head, err := store.Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	st.Outputs = map[string]any{"n": float64(42)}
	st.Serial++
	st.BasedOn = statestore.BaseDigest(cur, head)
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(filepath.Dir(dir), "deployer-errored-shop-dev.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	opened := 0
	service := func(context.Context) (*stateops.Ops, error) {
		opened++
		return stateops.New(core.New(core.Deps{Locks: m, Store: store, Now: clock, Getenv: func(string) string { return "" }})), nil
	}

	_, err = stateops.PushFile(ctx, service, stateops.PushRequest{Target: tg, File: file, Confirm: func(core.Target, *statestore.State) error { return errors.New("declined") }})
	if err == nil || err.Error() != "declined" || opened != 0 {
		t.Fatalf("a declined push: %v; backends opened %d times, want none", err, opened)
	}
	_, err = stateops.PushFile(ctx, service, stateops.PushRequest{Target: tg, File: file, MaxStateSize: int64(len(doc) - 1)})
	if err == nil || !strings.Contains(err.Error(), "deployer-errored-shop-dev.json") || opened != 0 {
		t.Fatalf("a file above max_state_size: %v; backends opened %d times, want none", err, opened)
	}

	var seen *statestore.State
	res, err := stateops.PushFile(ctx, service, stateops.PushRequest{Target: tg, File: file, LockTimeout: time.Second,
		Confirm: func(t core.Target, st *statestore.State) error { seen = st; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != tg || res.Head.Serial != 2 || seen == nil || fmt.Sprint(seen.Outputs["n"]) != "42" {
		t.Errorf("push: %+v (confirmed %v)", res, seen)
	}
	got, _, err := store.Load(ctx, "shop", "dev")
	if err != nil || got.Serial != 2 || fmt.Sprint(got.Outputs["n"]) != "42" {
		t.Errorf("state after push: %+v, %v", got, err)
	}
	if _, err := lb.Get(ctx, tg.LockKey()); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("push left its lock: %v", err)
	}
}
