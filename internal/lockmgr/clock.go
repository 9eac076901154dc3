package lockmgr

import (
	"context"
	"fmt"
	"time"
)

// DefaultMaxClockSkew is how far deployer's clock may be from the lock
// backend's before it refuses to hold a lease (docs/locking.md, "Clocks").
const DefaultMaxClockSkew = 30 * time.Second

// ServerClock is implemented by backends that can tell their own time: the
// Date header of an S3 or DynamoDB reply, now() of PostgreSQL, TIME of Redis.
type ServerClock interface {
	// ServerTime returns the backend's current time, read with one request.
	ServerTime(ctx context.Context) (time.Time, error)
}

// ClockSkewError: deployer's clock and the lock backend's differ by more than
// the bound, so expiry decisions made with deployer's clock are not safe.
type ClockSkewError struct {
	Skew time.Duration // backend time minus local time
	Max  time.Duration
}

func (e *ClockSkewError) Error() string {
	dir := "ahead of"
	skew := e.Skew
	if skew < 0 {
		dir, skew = "behind", -skew
	}
	return fmt.Sprintf("the lock backend's clock is %s %s this machine's (more than the %s allowed): "+
		"lease expiry would not be safe; synchronise this machine's clock (NTP) and try again", skew.Round(time.Second), dir, e.Max)
}

// checkClock compares the backend's clock with o.Now once per Manager (until
// a check succeeds): nil when the backend cannot tell its time or the skew is
// within o.MaxClockSkew, *ClockSkewError otherwise.
func (m *Manager) checkClock(ctx context.Context) error {
	sc, ok := m.b.(ServerClock)
	if !ok || m.opts.MaxClockSkew < 0 || m.clockOK.Load() {
		return nil
	}
	before := m.opts.Now()
	server, err := sc.ServerTime(ctx)
	if err != nil {
		return fmt.Errorf("read the lock backend's clock: %w", err)
	}
	after := m.opts.Now()
	local := before.Add(after.Sub(before) / 2)
	skew := server.Sub(local)
	// A server time in whole seconds (HTTP Date) is up to 1 s behind.
	if abs(skew) > m.opts.MaxClockSkew+time.Second {
		return &ClockSkewError{Skew: skew, Max: m.opts.MaxClockSkew}
	}
	m.clockOK.Store(true)
	return nil
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
