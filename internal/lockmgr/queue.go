package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The wait queue (docs/locking.md, "Wait queue"). A process that waits for a
// held lock draws a ticket and registers a waiter record; the lock goes to
// the waiters in ticket order. Waiter records are lock records of their own
// under keys that never collide with lock keys:
//
//	queue:{scope}                          the ticket dispenser (its fence is the last ticket)
//	queue:{scope}#{ticket, 19 digits}#{key}  one waiter for key
//
// The scope is the stack/environment (StackKey) for stack, service and
// component keys, so waiters of a stack and of its components share one
// queue; a custom key is its own scope.
const queuePrefix = "queue:"

// Poll intervals of a waiter (docs/locking.md, "Wait queue"). With a backend
// that announces releases (Notifier) they are only a fallback.
const (
	headPoll      = 50 * time.Millisecond // the head of the queue, without notifications
	followPoll    = 500 * time.Millisecond
	notifiedPoll  = time.Second // head and followers, with notifications
	notifiedSlack = 2 * time.Second
)

// Notifier is implemented by backends that announce released records: Redis
// (pub/sub), PostgreSQL (LISTEN/NOTIFY), the file backend (inotify and its
// kin). Waiters then wake at once instead of polling fast.
type Notifier interface {
	// Watch returns a channel that receives the key of every record
	// released, removed or taken over from now on, until ctx ends (then it
	// is closed). Keys may be dropped under load: waiters still poll slowly.
	// An empty key wakes every waiter.
	Watch(ctx context.Context) (<-chan string, error)
}

// Remover is implemented by backends whose Release leaves a tombstone
// (DynamoDB, S3, PostgreSQL) or a fence file (file): Remove deletes the
// record of key outright. The Manager uses it only for wait-queue records,
// which one waiter alone writes, so that they leave no debris.
type Remover interface {
	Remove(ctx context.Context, key string) error
}

// QueueScope returns the wait queue a lock key's waiters share: the
// stack/environment of a stack, service or component key, the key itself for
// a custom key.
func QueueScope(key string) string {
	if pk, ok := ParseKey(key); ok && pk.Level != LevelCustom {
		return StackKey(pk.Stack, pk.Env)
	}
	return key
}

// IsQueueKey reports whether a backend key holds a wait-queue record rather
// than a lock (`state locks` lists them as waiters).
func IsQueueKey(key string) bool { return strings.HasPrefix(key, queuePrefix) }

func dispenserKey(scope string) string { return queuePrefix + scope }

func waiterKey(scope string, ticket int64, key string) string {
	return fmt.Sprintf("%s%s#%019d#%s", queuePrefix, scope, ticket, key)
}

// parseWaiterKey splits a waiter record's key; ok is false for dispensers and
// foreign keys.
func parseWaiterKey(k string) (scope string, ticket int64, key string, ok bool) {
	rest, found := strings.CutPrefix(k, queuePrefix)
	if !found {
		return "", 0, "", false
	}
	scope, rest, found = strings.Cut(rest, "#")
	if !found {
		return "", 0, "", false
	}
	num, key, found := strings.Cut(rest, "#")
	if !found || len(num) != 19 {
		return "", 0, "", false
	}
	t, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return scope, t, key, true
}

// scopeOf returns the queue scope a released key belongs to (a lock key or a
// waiter record's key).
func scopeOf(k string) string {
	if rest, ok := strings.CutPrefix(k, queuePrefix); ok {
		scope, _, _ := strings.Cut(rest, "#")
		return scope
	}
	return QueueScope(k)
}

// Waiter is one process waiting for a lock (`state locks`): its record
// (lockedBy, metadata, since = lockedAt, lastHeartbeat, expiresAt) with its
// verdict, the key it waits for, its ticket and its position.
type Waiter struct {
	Status
	// Key is the lock key waited for.
	Key    string `json:"key"`
	Ticket int64  `json:"ticket"`
	// Position counts from 1 (next) among the live waiters of the queue
	// whose keys conflict with Key; 0 for an expired waiter, which is skipped.
	Position int `json:"position"`
}

// waiterTTL is how long a waiter's record lives without a heartbeat: a
// waiter killed with -9 is skipped after it (stale_after, capped by the TTL).
func (m *Manager) waiterTTL() time.Duration { return min(m.opts.TTL, m.opts.StaleAfter) }

// Waiters returns the waiters for keys under prefix (as List), in ticket
// order, with positions at the Manager's now.
func (m *Manager) Waiters(ctx context.Context, prefix string) ([]Waiter, error) {
	recs, err := m.b.List(ctx, queuePrefix+prefix)
	if err != nil {
		return nil, err
	}
	now := m.opts.Now()
	var out []Waiter
	for _, r := range recs {
		scope, ticket, key, ok := parseWaiterKey(r.LockKey)
		if !ok {
			continue
		}
		w := Waiter{Status: m.Inspect(r), Key: key, Ticket: ticket}
		w.Level = levelOf(key)
		if !r.Expired(now) {
			w.Position = 1
			for _, o := range out {
				if o.Position > 0 && scopeOf(o.LockKey) == scope && Conflicts(o.Key, key) {
					w.Position++
				}
			}
		}
		out = append(out, w)
	}
	kept := out[:0]
	for _, w := range out {
		if strings.HasPrefix(w.Key, prefix) {
			kept = append(kept, w)
		}
	}
	return kept, nil
}

func levelOf(key string) Level {
	pk, _ := ParseKey(key)
	return pk.Level
}

// queued is one Acquire's place in the wait queue.
type queued struct {
	key, scope string
	ticket     int64
	rec        Record // the waiter record as last written
	renewed    time.Time
	wake       <-chan string
	stopWatch  context.CancelFunc
}

// register draws a ticket and writes the waiter record. It subscribes to
// release announcements first, so no release after the registration is
// missed.
func (a *acquisition) register(ctx context.Context) error {
	m := a.m
	scope := QueueScope(a.r.Key)
	if a.q == nil {
		a.q = &queued{scope: scope}
		if n, ok := m.b.(Notifier); ok {
			wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			if ch, err := n.Watch(wctx); err == nil {
				a.q.wake, a.q.stopWatch = ch, cancel
			} else {
				cancel()
			}
		}
	}
	now := m.opts.Now()
	// The dispenser's record is always expired (expiresAt 0), so every
	// draw takes it and its fence, larger than any before, is the ticket.
	// Many waiters drawing at once can exhaust a backend's own retries of
	// its conditional write (S3): draw again a few times.
	var d Record
	var err error
	for try := 0; ; try++ {
		d, err = m.b.TryAcquire(ctx, Record{LockKey: dispenserKey(scope), LockID: uuid.NewString(), LockedBy: a.r.LockedBy,
			LockedAt: now.Unix(), LastHeartbeat: now.Unix(), Metadata: Metadata{Operation: OpQueue}})
		if err == nil || Transient(m.b, err) || IsRecordTooLarge(err) || try >= 7 || ctx.Err() != nil {
			break
		}
		if serr := sleep(ctx, time.Duration(10+rand.IntN(70))*time.Millisecond); serr != nil {
			return serr
		}
	}
	if err != nil {
		return fmt.Errorf("draw a wait-queue ticket for %s: %w", a.r.Key, err)
	}
	rec := Record{LockKey: waiterKey(scope, d.Fence, a.r.Key), LockID: a.lockID, LockedBy: a.r.LockedBy,
		LockedAt: now.Unix(), ExpiresAt: now.Add(m.waiterTTL()).Unix(), LastHeartbeat: now.Unix(), Metadata: a.r.Metadata}
	if err := checkWritable(rec); err != nil {
		return err
	}
	if _, err := m.b.TryAcquire(ctx, rec); err != nil {
		var held *HeldError
		if !errors.As(err, &held) || held.Record.LockID != a.lockID {
			return fmt.Errorf("join the wait queue of %s: %w", a.r.Key, err)
		}
	}
	a.q.key, a.q.ticket, a.q.rec, a.q.renewed = rec.LockKey, d.Fence, rec, now
	return nil
}

// renew heartbeats the waiter record every heartbeat interval; a record lost
// (expired and removed while this process stalled) is registered again, at
// the back of the queue.
func (a *acquisition) renew(ctx context.Context) error {
	m := a.m
	now := m.opts.Now()
	if a.q == nil || a.q.key == "" || now.Sub(a.q.renewed) < m.opts.HeartbeatInterval {
		return nil
	}
	exp := now.Add(m.waiterTTL())
	err := m.b.Heartbeat(ctx, a.q.key, a.lockID, now, exp)
	if errors.Is(err, ErrLockLost) {
		a.q.key = ""
		return a.register(ctx)
	}
	if err != nil {
		return fmt.Errorf("renew the wait-queue record of %s: %w", a.r.Key, err)
	}
	a.q.renewed = now
	a.q.rec.LastHeartbeat, a.q.rec.ExpiresAt = now.Unix(), exp.Unix()
	return nil
}

// ahead lists the live waiters of the scope whose keys conflict with ours
// and whose tickets are below ours (all of them before we register), in
// ticket order. Waiter records expired for longer than a waiter's TTL are
// removed on the way: their owners are gone.
func (a *acquisition) ahead(ctx context.Context) ([]Record, error) {
	m := a.m
	scope := QueueScope(a.r.Key)
	recs, err := m.b.List(ctx, queuePrefix+scope+"#")
	if err != nil {
		return nil, fmt.Errorf("read the wait queue of %s: %w", a.r.Key, err)
	}
	now := m.opts.Now()
	var out []Record
	for _, r := range recs {
		s, ticket, key, ok := parseWaiterKey(r.LockKey)
		if !ok || s != scope || r.LockID == a.lockID {
			continue
		}
		if r.Expired(now) {
			if rm, ok := m.b.(Remover); ok && r.Expired(now.Add(-m.waiterTTL())) {
				_ = rm.Remove(ctx, r.LockKey)
			}
			continue
		}
		if a.q != nil && a.q.key != "" && ticket > a.q.ticket {
			continue
		}
		if Conflicts(key, a.r.Key) {
			out = append(out, r)
		}
	}
	return out, nil
}

// leave removes the waiter record, trying again for a few seconds when the
// backend is briefly unreachable: a record left behind holds up the waiters
// behind it until it expires.
func (a *acquisition) leave(ctx context.Context) {
	if a.q == nil {
		return
	}
	if a.q.stopWatch != nil {
		a.q.stopWatch()
		a.q.stopWatch = nil
	}
	if a.q.key == "" {
		return
	}
	key := a.q.key
	a.q.key = ""
	a.m.removeOwn(ctx, key, a.lockID)
}

// removeOwn deletes a record this Acquire wrote (a waiter record, or a lock
// record withdrawn after a failure) within 10 s, retrying passing failures.
func (m *Manager) removeOwn(ctx context.Context, key, lockID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		var err error
		if rm, ok := m.b.(Remover); ok && IsQueueKey(key) {
			err = rm.Remove(ctx, key) // the key is ours alone: no tombstone needed
		} else {
			err = m.b.Release(ctx, key, lockID)
		}
		if err == nil || !Transient(m.b, err) || sleep(ctx, delay) != nil {
			return
		}
		delay = min(2*delay, time.Second)
	}
}

// pause waits d, or until a release in our scope is announced; released is
// the key announced ("" after d, or for an announcement of no key).
func (a *acquisition) pause(ctx context.Context, d time.Duration) (released string, err error) {
	if a.q == nil || a.q.wake == nil {
		return "", sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-t.C:
			return "", nil
		case k, ok := <-a.q.wake:
			if !ok {
				a.q.wake = nil // the subscription ended: poll
				continue
			}
			if k == "" || scopeOf(k) == a.q.scope {
				return k, nil
			}
		}
	}
}

// pollEvery returns how often the head (or a follower) looks again.
func (a *acquisition) pollEvery(head bool) time.Duration {
	notified := a.q != nil && a.q.wake != nil
	switch {
	case notified && head:
		return notifiedPoll
	case notified:
		return notifiedSlack
	case head:
		return headPoll
	default:
		return followPoll
	}
}

// Enqueue registers r as a waiter for r.Key and returns its waiter record,
// without waiting, renewing or leaving: what a waiter killed with -9 leaves
// behind, skipped by the others once it expires (conformance tests).
func (m *Manager) Enqueue(ctx context.Context, r Request) (Record, error) {
	pk, ok := ParseKey(r.Key)
	if !ok {
		return Record{}, fmt.Errorf("invalid lock key %q", r.Key)
	}
	a := &acquisition{m: m, r: r, pk: pk, start: m.opts.Now(), lockID: uuid.NewString()}
	if err := a.register(ctx); err != nil {
		return Record{}, err
	}
	if a.q.stopWatch != nil {
		a.q.stopWatch()
	}
	return a.q.rec, nil
}
