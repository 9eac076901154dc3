package redis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// gcGrace is how long Redis keeps a record past its expiresAt before deleting
// it by TTL: long enough that `state locks` shows it as EXPIRED for a while.
// Correctness never depends on it: the acquire script decides expiry from
// expiresAt and the newcomer's clock.
const gcGrace = 10 * time.Minute

// Backend is the Redis lock backend. Safe for concurrent use.
type Backend struct {
	c  goredis.UniversalClient
	ns string
	// hint is set while Redis has not answered since Open found it
	// unreachable: errors then say what to check.
	hintMu sync.Mutex
	hint   string
}

var _ lockmgr.Backend = (*Backend)(nil)

// quietLogger drops go-redis's own log lines ("connection pool: failed to
// dial ..."): every failure they describe also comes back as an error, which
// deployer reports once with the fix.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { goredis.SetLogger(quietLogger{}) }

// Open connects to the Redis of rawURL (see ParseURL) and checks it answers
// PING. Errors name the URL without its password.
func Open(ctx context.Context, rawURL string) (*Backend, error) {
	uo, ns, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := goredis.NewUniversalClient(uo)
	if err := c.Ping(ctx).Err(); err != nil {
		b := New(c, Options{Namespace: ns})
		if b.Transient(err) || lockmgr.NetworkError(err) {
			// Maybe a failover in progress: a command with lock timeout
			// left waits it out (docs/locking.md#backend-failures-while-waiting);
			// its errors keep the hint until Redis answers.
			b.hint = fmt.Sprintf("connect to lock backend %s", backendurl.Redact(rawURL))
			return b, nil
		}
		_ = c.Close()
		return nil, fmt.Errorf("connect to lock backend %s: %w (check that Redis runs there and backend.lock is right)", backendurl.Redact(rawURL), err)
	}
	return New(c, Options{Namespace: ns}), nil
}

// explain adds the connection hint to err while Redis has not answered yet
// since Open found it unreachable.
func (b *Backend) explain(err error) error {
	if err == nil {
		b.hintMu.Lock()
		b.hint = ""
		b.hintMu.Unlock()
		return nil
	}
	b.hintMu.Lock()
	h := b.hint
	b.hintMu.Unlock()
	if h == "" || !(b.Transient(err) || lockmgr.NetworkError(err)) {
		return err
	}
	return fmt.Errorf("%s: %w (check that Redis runs there and backend.lock is right)", h, err)
}

// New wraps a go-redis client. The Backend owns c: Close closes it.
func New(c goredis.UniversalClient, o Options) *Backend {
	if o.Namespace == "" {
		o.Namespace = "deployer"
	}
	return &Backend{c: c, ns: o.Namespace}
}

// recordKey is "{ns}:lock:{<key>}"; the braces are a Cluster hash tag so that
// the record and its fence counter share a slot for the acquire script.
func (b *Backend) recordKey(key string) string { return b.ns + ":lock:{" + key + "}" }

// lockKeyOf inverts recordKey.
func (b *Backend) lockKeyOf(rk string) string {
	return strings.TrimSuffix(strings.TrimPrefix(rk, b.ns+":lock:{"), "}")
}

// fenceKey is "{ns}:fence:{<key>}": outside the lock: namespace, so List never
// sees it, and never deleted, so fences keep growing across release.
func (b *Backend) fenceKey(key string) string { return b.ns + ":fence:{" + key + "}" }

// receiptKey is "{ns}:released:{<key>}": the id of the last release of key,
// kept receiptTTL so that a release retried after its reply was lost (go-redis
// retries on a broken connection) knows it was its own (docs/locking.md,
// "Lost replies").
func (b *Backend) receiptKey(key string) string { return b.ns + ":released:{" + key + "}" }

const receiptTTL = 10 * time.Minute

// px is the Redis TTL in milliseconds of a record expiring at expiresAt
// written at `from` (epoch seconds), plus gcGrace.
func px(from, expiresAt int64) int64 {
	return max(expiresAt-from, 0)*1000 + gcGrace.Milliseconds()
}

// TryAcquire implements lockmgr.Backend with one Lua script: the record is
// written iff none exists or its expiresAt < rec.LockedAt, and fenced by INCR
// of the key's counter. *HeldError with the live holder's record otherwise.
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	got, err := b.tryAcquire(ctx, rec)
	var held *lockmgr.HeldError
	if errors.As(err, &held) {
		_ = b.explain(nil) // Redis answered
		return got, err
	}
	return got, b.explain(err)
}

func (b *Backend) tryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s: %w", rec.LockKey, err)
	}
	if rec.LockKey == "" {
		return lockmgr.Record{}, errors.New("acquire lock: empty lock key")
	}
	rec.Fence = 0
	doc, err := json.Marshal(rec)
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("encode lock record %s: %w", rec.LockKey, err)
	}
	head, ok := bytes.CutSuffix(doc, []byte(`"fence":0}`))
	if !ok {
		return lockmgr.Record{}, fmt.Errorf("encode lock record %s: fence is not the last field", rec.LockKey)
	}
	res, err := acquireScript.Run(ctx, b.c,
		[]string{b.recordKey(rec.LockKey), b.fenceKey(rec.LockKey)},
		string(head)+`"fence":`, "}", rec.LockedAt, px(rec.LockedAt, rec.ExpiresAt), lockmgr.MaxRecordBytes).Slice()
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s in redis: %w", rec.LockKey, err)
	}
	if len(res) != 2 {
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s in redis: unexpected script reply %v", rec.LockKey, res)
	}
	switch code, _ := res[0].(int64); code {
	case 1:
		fence, ok := res[1].(int64)
		if !ok {
			return lockmgr.Record{}, fmt.Errorf("acquire lock %s in redis: unexpected fence %v", rec.LockKey, res[1])
		}
		rec.Fence = fence
		return rec, nil
	case 0:
		holder, err := decode(res[1])
		if err != nil {
			return lockmgr.Record{}, fmt.Errorf("acquire lock %s: read holder: %w", rec.LockKey, err)
		}
		if holder.LockID == rec.LockID {
			// Our own script, retried by go-redis after its reply was lost.
			return holder, nil
		}
		return lockmgr.Record{}, &lockmgr.HeldError{Record: holder}
	case 3:
		n, _ := res[1].(int64)
		return lockmgr.Record{}, b.tooLarge(rec.LockKey, n)
	default:
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s: redis key %s holds something that is not a lock record: inspect it, and DEL it if it is debris", rec.LockKey, b.recordKey(rec.LockKey))
	}
}

// Heartbeat implements lockmgr.Backend: sets lastHeartbeat=at and expiresAt
// iff the record's lockId is lockID; ErrLockLost otherwise.
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("heartbeat lock %s: %w", key, err)
	}
	n, err := heartbeatScript.Run(ctx, b.c, []string{b.recordKey(key)},
		lockID, at.Unix(), expiresAt.Unix(), px(at.Unix(), expiresAt.Unix()), lockmgr.MaxRecordBytes).Int64()
	if err != nil {
		return fmt.Errorf("heartbeat lock %s in redis: %w", key, err)
	}
	if n != 1 {
		return fmt.Errorf("heartbeat lock %s (lock id %s): %w", key, lockID, lockmgr.ErrLockLost)
	}
	return nil
}

// Release implements lockmgr.Backend: deletes the record iff its lockId is
// lockID; ErrLockLost otherwise. The fence counter stays.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release lock %s: %w", key, err)
	}
	rid := uuid.NewString()
	n, err := releaseScript.Run(ctx, b.c, []string{b.recordKey(key), b.receiptKey(key)}, lockID, rid, receiptTTL.Milliseconds(), b.releasedChannel(), key, lockmgr.MaxRecordBytes).Int64()
	if err != nil {
		return fmt.Errorf("release lock %s in redis: %w", key, err)
	}
	if n != 1 {
		return fmt.Errorf("release lock %s (lock id %s): %w", key, lockID, lockmgr.ErrLockLost)
	}
	return nil
}

// Get implements lockmgr.Backend; ErrNotFound when no record exists.
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	rec, err := b.get(ctx, key)
	if errors.Is(err, lockmgr.ErrNotFound) {
		_ = b.explain(nil)
		return rec, err
	}
	return rec, b.explain(err)
}

func (b *Backend) get(ctx context.Context, key string) (lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return lockmgr.Record{}, fmt.Errorf("read lock %s: %w", key, err)
	}
	res, err := getScript.Run(ctx, b.c, []string{b.recordKey(key)}, lockmgr.MaxRecordBytes).Slice()
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("read lock %s from redis: %w", key, err)
	}
	v, err := b.value(key, res)
	if err != nil {
		return lockmgr.Record{}, err
	}
	rec, err := decode(v)
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("read lock %s: %w", key, err)
	}
	return rec, nil
}

// value reads a getScript reply for key: the stored value, an error
// wrapping lockmgr.ErrNotFound, or *lockmgr.RecordTooLargeError.
func (b *Backend) value(key string, res []any) (any, error) {
	code, _ := res[0].(int64)
	switch {
	case code == 0:
		return nil, fmt.Errorf("read lock %s: %w", key, lockmgr.ErrNotFound)
	case code == 1 && len(res) == 2:
		return res[1], nil
	case code == 2 && len(res) == 2:
		n, _ := res[1].(int64)
		return nil, b.tooLarge(key, n)
	}
	return nil, fmt.Errorf("read lock %s from redis: unexpected script reply %v", key, res)
}

// tooLarge is the *lockmgr.RecordTooLargeError of the n-byte value at key.
func (b *Backend) tooLarge(key string, n int64) error {
	rk := b.recordKey(key)
	return lockmgr.TooLarge(key, "redis key "+rk, "redis-cli DEL '"+rk+"'", max(n, lockmgr.MaxRecordBytes+1))
}

// List implements lockmgr.Backend by SCAN MATCH over the record namespace
// (on every master of a Cluster), then pipelined GETs. Records deleted
// between the scan and the read are left out. Sorted by key.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	recs, err := b.list(ctx, prefix)
	return recs, b.explain(err)
}

func (b *Backend) list(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list locks %q: %w", prefix, err)
	}
	match := b.ns + ":lock:{" + globEscape(prefix) + "*"
	var (
		mu   sync.Mutex
		keys []string
	)
	scan := func(ctx context.Context, c goredis.Cmdable) error {
		var ks []string
		it := c.Scan(ctx, 0, match, 1000).Iterator()
		for it.Next(ctx) {
			ks = append(ks, it.Val())
		}
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return it.Err()
	}
	var err error
	if cc, ok := b.c.(*goredis.ClusterClient); ok {
		// A Cluster scans per node: every master, concurrently.
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(ctx, b.c)
	}
	if err != nil {
		return nil, fmt.Errorf("list locks %q: scan redis: %w", prefix, err)
	}
	return b.getAll(ctx, prefix, keys)
}

func (b *Backend) getAll(ctx context.Context, prefix string, keys []string) ([]lockmgr.Record, error) {
	recs := make([]lockmgr.Record, 0, len(keys))
	const chunk = 500
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		cmds := make([]*goredis.Cmd, len(part))
		_, err := b.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, k := range part {
				cmds[i] = getScript.Eval(ctx, p, []string{k}, lockmgr.MaxRecordBytes)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list locks %q: read records: %w", prefix, err)
		}
		for i, cmd := range cmds {
			res, err := cmd.Slice()
			if err != nil {
				return nil, fmt.Errorf("list locks %q: read %s: %w", prefix, part[i], err)
			}
			v, err := b.value(b.lockKeyOf(part[i]), res)
			if errors.Is(err, lockmgr.ErrNotFound) {
				continue // released since the scan
			}
			if err != nil {
				return nil, fmt.Errorf("list locks %q: %w", prefix, err)
			}
			rec, err := decode(v)
			if err != nil {
				return nil, fmt.Errorf("list locks %q: %s: %w", prefix, part[i], err)
			}
			recs = append(recs, rec)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].LockKey < recs[j].LockKey })
	return recs, nil
}

// Close closes the client; it does not release locks.
func (b *Backend) Close() error { return b.c.Close() }

func decode(v any) (lockmgr.Record, error) {
	s, ok := v.(string)
	if !ok {
		return lockmgr.Record{}, fmt.Errorf("unexpected redis value %T", v)
	}
	var rec lockmgr.Record
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return lockmgr.Record{}, fmt.Errorf("lock record is not valid JSON: %w", err)
	}
	return rec, nil
}

// globEscape quotes the SCAN MATCH metacharacters *?[]\ in s.
func globEscape(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

var _ lockmgr.ServerClock = (*Backend)(nil)

// ServerTime returns Redis's TIME.
func (b *Backend) ServerTime(ctx context.Context) (time.Time, error) {
	t, err := b.c.Time(ctx).Result()
	if err != nil {
		return time.Time{}, b.explain(fmt.Errorf("read redis clock: %w", err))
	}
	_ = b.explain(nil)
	return t, nil
}
