package lockmgr

import "time"

// Observer receives the Manager's lock events for metrics
// (docs/observability.md#metrics). Calls are synchronous, from the goroutine
// that did the work (heartbeats from the lease's own): implementations must
// be cheap and safe for concurrent use.
type Observer interface {
	// LockAcquired reports one Acquire of key: how long it took, waits for
	// a held lock included, and its error (nil: acquired).
	LockAcquired(key string, wait time.Duration, err error)
	// LockReleased reports a lease of key released after being held for held.
	LockReleased(key string, held time.Duration)
	// LockHeartbeat reports one heartbeat of key (nil: the lease was renewed).
	LockHeartbeat(key string, err error)
}

// nopObserver is the Observer of a Manager without one.
type nopObserver struct{}

func (nopObserver) LockAcquired(string, time.Duration, error) {}
func (nopObserver) LockReleased(string, time.Duration)        {}
func (nopObserver) LockHeartbeat(string, error)               {}
