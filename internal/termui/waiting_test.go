package termui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// A long wait in a log is one line when it starts, then one line per 30 s,
// however many tries the backoff makes; on a terminal one line is updated.
func TestWaitReporter(t *testing.T) {
	holder := lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "L1", LockedBy: "alice@laptop", LockedAt: 1700000000,
		Metadata: lockmgr.Metadata{Operation: "deploy", PID: 42, Hostname: "laptop"}}
	run := func(tty bool) string {
		var b bytes.Buffer
		r := NewWaitReporter(&b, tty)
		const timeout = 15 * time.Minute
		// 95 s of tries one second apart.
		for i := 0; i <= 95; i++ {
			el := time.Duration(i) * time.Second
			r.Event(lockmgr.WaitEvent{Key: holder.LockKey, Holder: holder, Elapsed: el, Left: timeout - el, RetryIn: time.Second, First: i == 0})
		}
		r.Event(lockmgr.WaitEvent{Key: holder.LockKey, Holder: holder, Done: true, Acquired: true})
		return b.String()
	}

	log := run(false)
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	want := []string{
		"waiting for lock stack:shop:env:dev (up to 15m0s): held by alice@laptop (deploy, pid 42 on laptop, since 2023-11-14T22:13:20Z, lock id L1)",
		"still waiting for lock stack:shop:env:dev held by alice@laptop: 30s waited, 14m30s left",
		"still waiting for lock stack:shop:env:dev held by alice@laptop: 1m0s waited, 14m0s left",
		"still waiting for lock stack:shop:env:dev held by alice@laptop: 1m30s waited, 13m30s left",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log output:\n%s\nwant:\n%s", log, strings.Join(want, "\n"))
	}

	term := run(true)
	if n := strings.Count(term, "\n"); n != 2 {
		t.Errorf("terminal output has %d lines, want 2 (the first line, then one updated line):\n%q", n, term)
	}
	if !strings.Contains(term, "\r\033[Kstill waiting for lock stack:shop:env:dev held by alice@laptop: 1m35s waited, 13m25s left\n") {
		t.Errorf("terminal output does not end with the updated line:\n%q", term)
	}
}

// A queued waiter is told its position; a backend failure being waited out
// is one line naming it and the time left.
func TestWaitReporterPositionAndRetry(t *testing.T) {
	holder := lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "L1", LockedBy: "alice@laptop", LockedAt: 1700000000,
		Metadata: lockmgr.Metadata{Operation: "deploy", PID: 42, Hostname: "laptop"}}
	var b bytes.Buffer
	r := NewWaitReporter(&b, false)
	r.Event(lockmgr.WaitEvent{Key: holder.LockKey, Retrying: errors.New("dial tcp 127.0.0.1:6379: connect: connection refused"),
		Left: 5 * time.Minute, First: true})
	r.Event(lockmgr.WaitEvent{Key: holder.LockKey, Holder: holder, Elapsed: 2 * time.Second, Left: 4*time.Minute + 58*time.Second, Position: 2})
	want := "lock backend unavailable while acquiring stack:shop:env:dev, retrying for up to 5m0s: dial tcp 127.0.0.1:6379: connect: connection refused\n" +
		"waiting for lock stack:shop:env:dev (up to 5m0s, position 2 in the queue): held by alice@laptop (deploy, pid 42 on laptop, since 2023-11-14T22:13:20Z, lock id L1)\n"
	if b.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", b.String(), want)
	}
}
