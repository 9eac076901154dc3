package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

func TestEncodeKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"stack:shop:env:prod", "stack%3Ashop%3Aenv%3Aprod"},
		{"stack:shop:env:prod:component:api/web", "stack%3Ashop%3Aenv%3Aprod%3Acomponent%3Aapi%2Fweb"},
		{"custom:Nightly Backup/..", "custom%3A%4Eightly%20%42ackup%2F%2E%2E"},
		{"custom:ü", "custom%3A%C3%BC"},
	} {
		if got := encodeKey(tc.key); got != tc.want {
			t.Errorf("encodeKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if back, ok := decodeKey(tc.want); !ok || back != tc.key {
			t.Errorf("decodeKey(%q) = %q, %v; want %q", tc.want, back, ok, tc.key)
		}
	}
}

func newRecord(key string) lockmgr.Record {
	now := time.Unix(1705329600, 0)
	return lockmgr.Record{LockKey: key, LockID: "550e8400-e29b-41d4-a716-446655440000", LockedBy: "github-actions-run-12345",
		LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(),
		Metadata: lockmgr.Metadata{User: "alice@company.com", Hostname: "runner-abc123", PID: 54321}}
}

// The record file is the lock item of docs/design.md#lock-record plus fence, readable by other tools.
func TestRecordFileHasSeedAttributes(t *testing.T) {
	dir := t.TempDir()
	b, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := "stack:user-platform:env:production"
	if _, err := b.TryAcquire(context.Background(), newRecord(key)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "locks", "stack%3Auser-platform%3Aenv%3Aproduction.json"))
	if err != nil {
		t.Fatalf("record file not where the layout says: %v", err)
	}
	var item map[string]any
	if err := json.Unmarshal(data, &item); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range item {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"expiresAt", "fence", "lastHeartbeat", "lockId", "lockKey", "lockedAt", "lockedBy", "metadata"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("record attributes (-want +got):\n%s", d)
	}
	if item["lockedAt"] != float64(1705329600) || item["fence"] != float64(1) {
		t.Errorf("lockedAt, fence = %v, %v; want epoch seconds 1705329600 and 1", item["lockedAt"], item["fence"])
	}
}

// Keys too long for a file name are stored under a hash and still listed.
func TestLongKey(t *testing.T) {
	b, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	name := strings.Repeat("a", 63)
	key := lockmgr.ComponentKey(name, name, name, name)
	if stem := encodeKey(key); !strings.HasPrefix(stem, "~") {
		t.Fatalf("encodeKey of a %d-byte key = %q, want a hashed name", len(key), stem)
	}
	rec, err := b.TryAcquire(ctx, newRecord(key))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.List(ctx, lockmgr.StackKey(name, name))
	if err != nil || len(got) != 1 || got[0] != rec {
		t.Errorf("List = %+v, %v; want the long key's record", got, err)
	}
	if err := b.Release(ctx, key, rec.LockID); err != nil {
		t.Fatal(err)
	}
	again, err := b.TryAcquire(ctx, newRecord(key))
	if err != nil || again.Fence != rec.Fence+1 {
		t.Errorf("reacquire = fence %d, %v; want %d", again.Fence, err, rec.Fence+1)
	}
}

// A damaged record is reported with its path and what to do, never overwritten.
func TestDamagedRecord(t *testing.T) {
	dir := t.TempDir()
	b, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := "stack:shop:env:prod"
	path := filepath.Join(dir, "locks", encodeKey(key)+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"lockKey": "stack:sh`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = b.TryAcquire(context.Background(), newRecord(key))
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("TryAcquire over a damaged record = %v, want an error naming %s and the fix", err, path)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"lockKey": "stack:sh` {
		t.Errorf("damaged record was overwritten: %q", data)
	}
}

func TestClosed(t *testing.T) {
	b, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(context.Background(), newRecord("custom:x")); err == nil {
		t.Error("TryAcquire after Close succeeded, want an error")
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func TestNewOnUnwritableDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(parent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(parent); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("New under a regular file = %v, want an error saying the directory must be writable", err)
	}
}

// Opening, listing and reading create nothing: read-only commands leave the
// directory as they found it; the first write creates DIR/locks.
func TestReadsCreateNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".deployer")
	b, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if recs, err := b.List(context.Background(), ""); err != nil || len(recs) != 0 {
		t.Errorf("List on a missing directory = %v, %v; want no records, no error", recs, err)
	}
	if _, err := b.Get(context.Background(), "stack:shop:env:prod"); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("Get on a missing directory = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after New, List and Get, %s exists (stat: %v); want nothing created", dir, err)
	}
	if _, err := b.TryAcquire(context.Background(), newRecord("stack:shop:env:prod")); err != nil {
		t.Fatalf("first TryAcquire: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "locks")); err != nil {
		t.Errorf("after the first write: %v, want DIR/locks created", err)
	}
}
