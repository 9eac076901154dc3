package lockmgr

import (
	"context"
	"errors"
	"time"
)

// WaitEvent describes one step of waiting for a held lock.
type WaitEvent struct {
	Key     string // the key asked for
	Holder  Record // the live record in the way (the key's, or a conflicting one's)
	Since   time.Time
	Elapsed time.Duration // since the first try
	Left    time.Duration // until Request.Timeout runs out
	RetryIn time.Duration // until the next try (0 when Done)
	First   bool          // the first wait of this Acquire
	// Done: the waiting is over; Acquired says whether the lease was taken.
	Done, Acquired bool
	// Position in the key's wait queue: 1 = next; 0 when not queued
	// (docs/locking.md, "Wait queue").
	Position int
	// Retrying is a passing backend failure (connection refused, a
	// failover answer, throttling) being waited out; Holder is then empty.
	// It is reported once per failure, not per try.
	Retrying error
}

// queue is the wait in the key's wait queue (docs/locking.md, "Wait queue"):
// try only when no live waiter with a conflicting key is ahead; otherwise
// register and wait, the head watching the holder, the others the waiter
// just ahead of them.
func (a *acquisition) queue(ctx context.Context) (Record, error) {
	free := false // the head saw the holder go: try at once
	for {
		var ahead []Record
		var err error
		if !free {
			ahead, err = a.ahead(ctx)
		}
		free = false
		if err == nil && len(ahead) == 0 {
			var rec Record
			rec, err = a.try(ctx)
			if err == nil {
				return rec, nil
			}
		}
		var held *HeldError
		if err != nil && !errors.As(err, &held) {
			if err := a.retry(ctx, err); err != nil {
				return Record{}, err
			}
			continue
		}
		left := a.r.Timeout - a.elapsed()
		if left <= 0 {
			return Record{}, a.giveUp(ctx, err)
		}
		if a.q == nil || a.q.key == "" {
			if err := a.register(ctx); err != nil {
				if err := a.retry(ctx, err); err != nil {
					return Record{}, err
				}
			}
			continue // look again, now with a ticket
		}
		if a.last.LockKey == "" {
			a.findHolder(ctx)
		}
		a.report(len(ahead)+1, left)
		if len(ahead) == 0 {
			free, err = a.watchHolder(ctx)
		} else {
			var gone bool
			gone, err = a.watchWaiter(ctx, ahead[len(ahead)-1])
			// The one waiter ahead left: this one is the head now, and
			// tries at once rather than reading the queue again.
			free = gone && len(ahead) == 1
		}
		if err != nil {
			if err := a.retry(ctx, err); err != nil {
				return Record{}, err
			}
		}
	}
}

// findHolder reads the live record in the way of a waiter that queued
// behind others without trying (best effort: the waiting line names it).
func (a *acquisition) findHolder(ctx context.Context) {
	prefix := a.r.Key
	if a.pk.Level != LevelCustom {
		prefix = StackKey(a.pk.Stack, a.pk.Env)
	}
	recs, err := a.m.b.List(ctx, prefix)
	if err != nil {
		return
	}
	now := a.m.opts.Now()
	for _, r := range recs {
		if !r.Expired(now) && Conflicts(a.r.Key, r.LockKey) {
			a.last = r
			return
		}
	}
}

// giveUp returns the held error for a wait that ran out of time: err when the
// last try gave one, else the key's current holder (or the last one seen).
func (a *acquisition) giveUp(ctx context.Context, err error) error {
	var held *HeldError
	if errors.As(err, &held) {
		return err
	}
	if rec, gerr := a.m.b.Get(ctx, a.last.LockKey); gerr == nil && a.last.LockKey != "" {
		a.last = rec
	}
	if a.last.LockKey == "" {
		if rec, gerr := a.m.b.Get(ctx, a.r.Key); gerr == nil {
			a.last = rec
		}
	}
	return &HeldError{Record: a.last}
}

// report tells OnWait about the wait: at once when the position or holder
// changed, else at most once a second.
func (a *acquisition) report(pos int, left time.Duration) {
	now := a.m.opts.Now()
	if a.waited && pos == a.lastPos && now.Sub(a.notified) < time.Second {
		return
	}
	a.notify(WaitEvent{Holder: a.last, Elapsed: now.Sub(a.start), Left: left, RetryIn: a.pollEvery(pos == 1), First: !a.waited, Position: pos})
	a.waited, a.lastPos, a.notified = true, pos, now
}

// watchHolder is the head's wait: poll the record in the way (one read) until
// it is released, expired or changed, or its release is announced. free
// says the holder went: the head then tries at once, without reading the
// queue again (no waiter can draw a ticket below its own).
func (a *acquisition) watchHolder(ctx context.Context) (free bool, err error) {
	var polled time.Time // when the last read began: reads start one interval apart
	for {
		wait := a.pollEvery(true)
		if !polled.IsZero() {
			wait = max(wait-time.Since(polled), 0)
		}
		released, err := a.pause(ctx, wait)
		if err != nil {
			return false, err
		}
		if a.last.LockKey == "" || released == a.last.LockKey {
			return true, nil
		}
		if err := a.renew(ctx); err != nil {
			return false, err
		}
		if a.elapsed() >= a.r.Timeout {
			return false, nil
		}
		polled = time.Now()
		rec, err := a.m.b.Get(ctx, a.last.LockKey)
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if rec.LockID != a.last.LockID || rec.Expired(a.m.opts.Now()) {
			return true, nil
		}
		a.report(1, a.r.Timeout-a.elapsed())
	}
}

// watchWaiter is a follower's wait: poll the waiter just ahead (one read)
// until it leaves or expires (gone), or a release is announced; then the
// queue is read again.
func (a *acquisition) watchWaiter(ctx context.Context, prev Record) (gone bool, err error) {
	for {
		if _, err := a.pause(ctx, a.pollEvery(false)); err != nil {
			return false, err
		}
		if err := a.renew(ctx); err != nil {
			return false, err
		}
		if a.elapsed() >= a.r.Timeout || (a.q != nil && a.q.wake != nil) {
			return false, nil
		}
		rec, err := a.m.b.Get(ctx, prev.LockKey)
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if rec.LockID != prev.LockID || rec.Expired(a.m.opts.Now()) {
			return true, nil
		}
	}
}
