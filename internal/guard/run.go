package guard

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/deployer-dev/deployer/internal/proc"
)

const maxStopOutput = 64 << 10

// runStop runs command with sh -c in g.Dir under the supervisor (proc.Cmd:
// its own process group, dying with deployer), in g.Environ's environment
// without the secrets key's variables and with DEPLOYER_GUARD_RESOURCE and
// DEPLOYER_GUARD_AS, streaming its output to g.Output and keeping the last
// 64 KiB. Cancelling ctx sends SIGTERM to its process group, then SIGKILL
// after g.Grace.
func (g *Guard) runStop(ctx context.Context, command, resource, as string) (StopRun, error) {
	run := StopRun{Command: command}
	g.logf("running the stop command of %s: %s", resource, command)
	c := proc.Command(ctx, "sh", "-c", command)
	c.Grace = g.Grace
	c.Dir = g.Dir
	c.Env = append(proc.Environ(proc.UserCommand, g.Environ()), "DEPLOYER_GUARD_RESOURCE="+resource, "DEPLOYER_GUARD_AS="+as)
	tail := &tailBuffer{max: maxStopOutput}
	w := io.MultiWriter(g.Output, tail)
	c.Stdout, c.Stderr = w, w
	start := g.now()
	if err := c.Start(); err != nil {
		run.ExitCode = -1
		if ctx.Err() != nil {
			return run, fmt.Errorf("cancelled before it started: %w", context.Cause(ctx))
		}
		return run, fmt.Errorf("start sh: %w", err)
	}
	exit, err := c.WaitExit()
	run.DurationSeconds = g.now().Sub(start).Seconds()
	run.Output = tail.String()
	run.ExitCode = exit.Code()
	if err != nil {
		run.ExitCode = -1 // the output could not be copied, or the command not waited for
	} else {
		err = exit.Err()
	}
	if err == nil {
		g.logf("the stop command of %s succeeded", resource)
		return run, nil
	}
	if ctx.Err() != nil {
		return run, fmt.Errorf("cancelled while running: %w", context.Cause(ctx))
	}
	return run, err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
