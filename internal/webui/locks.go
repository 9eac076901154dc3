package webui

import (
	"os"
	"strconv"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// lockRow is one held lock as the locks page shows it; every text is
// masked and sanitised (Server.text) before the template escapes it.
type lockRow struct {
	Backend, Key, Level, Scope, Holder, Operation, Host string
	PID                                                 string
	// PIDState: "alive" or "not running" for a holder on this host, "" for
	// another host (deployer cannot tell).
	PIDState, Since, Expires, Heartbeat, Verdict, LockID string
	Stale                                                bool
	Fence                                                int64
	// Break is the command that breaks this lock (docs/locking.md#breaking-a-lock).
	Break string
}

// waiterRow is one waiter of the wait queue, in the order it gets the lock.
type waiterRow struct {
	Backend, Key, Holder, Operation, Host, PID, Waiting string
	Position                                            int
}

// backendRow is one backend's part of the locks page.
type backendRow struct {
	Name       string
	Err        string
	LockingOff bool
	Locks      []lockRow
	Waiters    []waiterRow
}

// locksView is the locks page's table (also the SSE event's data).
type locksView struct {
	Seq      uint64
	At       string
	Backends []backendRow
	Count    int
}

var localHost, _ = os.Hostname()

func (s *Server) locksView(snap *Snapshot) locksView {
	v := locksView{Seq: snap.Seq, At: snap.At.UTC().Format(time.RFC3339)}
	for i, l := range snap.Listings {
		b := backendRow{Name: s.text(l.Source)}
		prefix := ""
		if i < len(s.cfg.Locks) {
			prefix = s.cfg.Locks[i].CommandPrefix
		}
		switch {
		case l.Err != nil:
			b.Err = s.text(l.Err.Error())
		case l.Result.LockingOff:
			b.LockingOff = true
		default:
			for _, st := range l.Result.Locks {
				b.Locks = append(b.Locks, s.lockRow(b.Name, prefix, st))
			}
			for _, w := range l.Result.Waiters {
				rec := w.Record
				b.Waiters = append(b.Waiters, waiterRow{Backend: b.Name, Key: s.text(w.Key), Holder: s.text(rec.LockedBy),
					Operation: s.text(string(rec.Metadata.Operation)), Host: s.text(rec.Metadata.Hostname),
					PID: pidText(rec.Metadata.PID), Waiting: age(w.Age), Position: w.Position})
			}
		}
		v.Count += len(b.Locks)
		v.Backends = append(v.Backends, b)
	}
	return v
}

func (s *Server) lockRow(backend, prefix string, st lockmgr.Status) lockRow {
	rec := st.Record
	r := lockRow{Backend: backend, Key: s.text(rec.LockKey), Level: s.text(string(st.Level)), Holder: s.text(rec.LockedBy),
		Operation: s.text(string(rec.Metadata.Operation)), Host: s.text(rec.Metadata.Hostname), PID: pidText(rec.Metadata.PID),
		Since:     time.Unix(rec.LockedAt, 0).UTC().Format("2006-01-02 15:04:05") + " (" + age(st.Age) + " ago)",
		Expires:   time.Unix(rec.ExpiresAt, 0).UTC().Format("2006-01-02 15:04:05"),
		Heartbeat: age(st.HeartbeatAge) + " ago", Verdict: string(st.Verdict), Stale: st.Verdict != lockmgr.Active,
		Fence: rec.Fence, LockID: s.text(rec.LockID), Scope: s.text(scopeText(rec.LockKey))}
	switch {
	case st.HolderGone:
		r.PIDState = "not running"
	case rec.Metadata.Hostname != "" && rec.Metadata.Hostname == localHost:
		r.PIDState = "alive"
	}
	r.Break = s.text(prefix + breakCommand(rec.LockKey, rec.LockID))
	return r
}

// scopeText is what a lock covers, in words: "shop/prod",
// "shop/prod service api", "custom nightly".
func scopeText(key string) string {
	pk, ok := lockmgr.ParseKey(key)
	if !ok {
		return key
	}
	switch pk.Level {
	case lockmgr.LevelCustom:
		return "custom " + pk.Name
	case lockmgr.LevelService:
		return pk.Stack + "/" + pk.Env + " service " + pk.Service
	case lockmgr.LevelComponent:
		return pk.Stack + "/" + pk.Env + " component " + pk.Service + "/" + pk.Component
	}
	return pk.Stack + "/" + pk.Env
}

// breakCommand is the `deployer unlock --force` that breaks exactly this
// holder's lock (its --lock-id), quoted to paste into a shell.
func breakCommand(key, lockID string) string {
	pk, ok := lockmgr.ParseKey(key)
	if !ok {
		return ""
	}
	args := []string{"deployer", "unlock"}
	switch pk.Level {
	case lockmgr.LevelCustom:
		args = append(args, "--key", pk.Name)
	default:
		args = append(args, "-s", pk.Stack, "-e", pk.Env)
		if pk.Level == lockmgr.LevelService {
			args = append(args, "--service", pk.Service)
		}
		if pk.Level == lockmgr.LevelComponent {
			args = append(args, "--component", pk.Service+"/"+pk.Component)
		}
	}
	args = append(args, "--force", "--lock-id", lockID)
	return sanitize.Command(args...)
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

func age(d time.Duration) string {
	return max(d.Round(time.Second), 0).String()
}
