package webui

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
)

// LockSource is one lock backend the UI lists: Name says which (its URL,
// as configured), List is the use case behind `deployer state locks` on it
// (stateops.Locking.Locks with an empty request).
type LockSource struct {
	Name string
	List func(context.Context) (*stateops.LocksResult, error)
	// CommandPrefix goes before each lock's unlock command: where to run
	// it when the backend is not the working directory's ("cd DIR && ").
	CommandPrefix string
}

// Listing is one backend's locks at one poll.
type Listing struct {
	Source string
	Result *stateops.LocksResult // nil when Err
	Err    error
}

// Snapshot is the result of one poll of every source.
type Snapshot struct {
	Seq      uint64 // grows by one with every poll
	At       time.Time
	Listings []Listing
	// Digest changes when what a viewer should notice changes: a lock
	// taken, released, renewed or changing verdict, a waiter, an error.
	// Ages alone do not change it.
	Digest [sha256.Size]byte
}

// digest is the Digest of s's listings.
func (s *Snapshot) digest() [sha256.Size]byte {
	h := sha256.New()
	for _, l := range s.Listings {
		fmt.Fprintf(h, "source %q err %v\n", l.Source, l.Err)
		if l.Result == nil {
			continue
		}
		fmt.Fprintf(h, "off %v\n", l.Result.LockingOff)
		for _, st := range l.Result.Locks {
			fmt.Fprintf(h, "lock %q %q %d %d %s %v %d\n", st.LockKey, st.LockID, st.LastHeartbeat, st.ExpiresAt, st.Verdict, st.HolderGone, st.Fence)
		}
		for _, w := range l.Result.Waiters {
			fmt.Fprintf(h, "waiter %q %q %d\n", w.Key, w.LockID, w.Position)
		}
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// Ticker makes the poller's ticks: a channel and its stop function.
// The default is time.NewTicker; tests drive a channel of their own.
type Ticker func(d time.Duration) (<-chan time.Time, func())

func timeTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Poller lists every source once per tick while someone watches, and hands
// the snapshot to every subscriber: however many viewers, one list per
// backend per interval (docs/ui.md#live-updates).
type Poller struct {
	sources  []LockSource
	interval time.Duration
	ticker   Ticker
	now      func() time.Time
	timeout  time.Duration

	mu     sync.Mutex
	last   *Snapshot
	seq    uint64
	subs   map[chan *Snapshot]struct{}
	pollMu sync.Mutex // one poll at a time (ticks and first page loads)
}

// NewPoller returns a Poller over sources at interval (> 0).
func NewPoller(sources []LockSource, interval time.Duration, ticker Ticker, now func() time.Time) *Poller {
	if ticker == nil {
		ticker = timeTicker
	}
	if now == nil {
		now = time.Now
	}
	return &Poller{sources: sources, interval: interval, ticker: ticker, now: now,
		timeout: max(interval, 10*time.Second), subs: map[chan *Snapshot]struct{}{}}
}

// Run polls on every tick while there are subscribers, until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	c, stop := p.ticker(p.interval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c:
			if p.Subscribers() == 0 {
				continue
			}
			p.broadcast(p.poll(ctx))
		}
	}
}

// Subscribers is how many viewers are watching.
func (p *Poller) Subscribers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subs)
}

// Subscribe returns a channel that receives the newest snapshot after each
// poll (a slow viewer skips to the newest) and a cancel function.
func (p *Poller) Subscribe() (<-chan *Snapshot, func()) {
	ch := make(chan *Snapshot, 1)
	p.mu.Lock()
	p.subs[ch] = struct{}{}
	p.mu.Unlock()
	return ch, func() {
		p.mu.Lock()
		delete(p.subs, ch)
		p.mu.Unlock()
	}
}

// Current returns the newest snapshot, polling first when there is none
// younger than the interval (a page load between ticks reuses the last).
func (p *Poller) Current(ctx context.Context) *Snapshot {
	// A viewer that goes away mid-poll must not leave a cancelled
	// listing for the others: the poll runs to its own timeout.
	ctx = context.WithoutCancel(ctx)
	p.pollMu.Lock()
	defer p.pollMu.Unlock()
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last != nil && p.now().Sub(last.At) < p.interval {
		return last
	}
	return p.pollLocked(ctx)
}

func (p *Poller) poll(ctx context.Context) *Snapshot {
	p.pollMu.Lock()
	defer p.pollMu.Unlock()
	return p.pollLocked(ctx)
}

// pollLocked lists every source once; pollMu is held.
func (p *Poller) pollLocked(ctx context.Context) *Snapshot {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	s := &Snapshot{At: p.now()}
	for _, src := range p.sources {
		res, err := src.List(ctx)
		s.Listings = append(s.Listings, Listing{Source: src.Name, Result: res, Err: err})
	}
	s.Digest = s.digest()
	p.mu.Lock()
	p.seq++
	s.Seq = p.seq
	p.last = s
	p.mu.Unlock()
	return s
}

func (p *Poller) broadcast(s *Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ch := range p.subs {
		select {
		case <-ch: // drop the one not yet read: the newest wins
		default:
		}
		ch <- s
	}
}
