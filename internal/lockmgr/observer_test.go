package lockmgr_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/file"
)

type event struct {
	Kind, Key string
	Err       bool
}

type recorder struct {
	mu     sync.Mutex
	events []event
	beat   chan struct{}
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}
func (r *recorder) LockAcquired(key string, _ time.Duration, err error) {
	r.add(event{"acquired", key, err != nil})
}
func (r *recorder) LockReleased(key string, _ time.Duration) { r.add(event{"released", key, false}) }
func (r *recorder) LockHeartbeat(key string, err error) {
	r.add(event{"heartbeat", key, err != nil})
	select {
	case r.beat <- struct{}{}:
	default:
	}
}

// The Manager reports every acquisition (success and failure), heartbeat
// and release to its Observer, which the metrics of docs/observability.md
// are built from.
func TestManagerReportsToObserver(t *testing.T) {
	b, err := file.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	obs := &recorder{beat: make(chan struct{}, 1)}
	m := lockmgr.NewManager(b, lockmgr.Options{HeartbeatInterval: 10 * time.Millisecond, Observer: obs})
	ctx := context.Background()
	key := lockmgr.StackKey("s", "e")
	lease, err := m.Acquire(ctx, lockmgr.Request{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	<-obs.beat // one heartbeat ran
	_, err = m.Acquire(ctx, lockmgr.Request{Key: lockmgr.ServiceKey("s", "e", "api")})
	var held *lockmgr.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire: %v, want *HeldError", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var got []event
	beats := 0
	for _, e := range obs.events {
		if e.Kind == "heartbeat" { // the ticker beats at its own pace; on a loaded machine
			// one may miss its 10 ms deadline and be reported as failed
			if e.Key != key {
				t.Errorf("heartbeat event %+v, want heartbeats of %s", e, key)
			}
			beats++
			continue
		}
		got = append(got, e)
	}
	if beats == 0 {
		t.Error("no heartbeat reported")
	}
	want := []event{
		{"acquired", key, false},
		{"acquired", lockmgr.ServiceKey("s", "e", "api"), true},
		{"released", key, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed events (-want +got):\n%s", diff)
	}
}
