package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/proc"
)

// errCancelled marks a step stopped because the caller's context was
// cancelled (errors.Is; the message is the stoppedError's).
var errCancelled = errors.New("cancelled")

// stoppedError is a step stopped because the caller's context was
// cancelled: "component app/build: create command "./build.sh" stopped",
// with the cancel's cause when it says more than a plain cancel (a lost
// lease). errors.Is(err, errCancelled) holds.
type stoppedError struct {
	msg   string
	cause error // context.Cause: context.Canceled for a plain cancel (Ctrl-C, SIGTERM)
}

func (e *stoppedError) Error() string {
	if e.cause == nil || e.cause == context.Canceled {
		return e.msg
	}
	return e.msg + ": " + e.cause.Error()
}

func (e *stoppedError) Is(target error) bool { return target == errCancelled }
func (e *stoppedError) Unwrap() error        { return e.cause }

// stopped is the stoppedError of a step whose context ctx was cancelled.
func stopped(ctx context.Context, msg string) error {
	return &stoppedError{msg: msg, cause: context.Cause(ctx)}
}

// StepError is a failed command: a non-zero exit, a timeout, or an outputs
// file that is not a JSON object.
type StepError struct {
	Address  string   // "service/component"
	Action   string   // create | update | delete
	Command  string   // the shell command
	ExitCode int      // -1 when killed by a signal or not started
	Reason   string   // what went wrong, e.g. "exited with code 3"
	Stderr   []string // last lines of stderr
	Err      error    // underlying error, if any
}

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "component %s: %s command %q %s", e.Address, e.Action, e.Command, e.Reason)
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "; last stderr lines:\n  %s", strings.Join(e.Stderr, "\n  "))
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// runSpec is one command to run.
type runSpec struct {
	address, action, command, dir string
	payload                       payload
	timeout                       time.Duration
	// grace replaces the engine's grace when positive (command.grace).
	grace    time.Duration
	progress io.Writer
	// captureStdout keeps stdout (at most inputfile.MaxOutputsBytes) in
	// runOutcome.stdout instead of streaming it, and reads no outputs
	// file: the read command.
	captureStdout bool
}

// runOutcome is what a finished (or failed) command left.
type runOutcome struct {
	command  string
	exitCode int
	duration time.Duration
	outputs  map[string]any
	stdout   []byte // with runSpec.captureStdout
}

func (o *runOutcome) actualState() map[string]any {
	return map[string]any{
		"command":          o.command,
		"exit_code":        o.exitCode,
		"duration_seconds": o.duration.Seconds(),
	}
}

// stderrTail is how many stderr lines a StepError keeps.
const stderrTail = 10

// run starts `sh -c command` under the supervisor (proc.Cmd: its own process
// group, dying with deployer), feeds it the payload, streams its output and
// reads its outputs file. On timeout or ctx cancellation the group gets
// SIGTERM, then SIGKILL after s.grace (else e.grace); Kill sends SIGKILL at once.
func (e *Engine) run(ctx context.Context, s runSpec) (*runOutcome, error) {
	stdin, err := json.Marshal(s.payload)
	if err != nil {
		return nil, fmt.Errorf("component %s: encode stdin: %w", s.address, err)
	}
	f, err := os.CreateTemp("", "deployer-outputs-*.json")
	if err != nil {
		return nil, fmt.Errorf("component %s: create outputs file: %w (check TMPDIR)", s.address, err)
	}
	outPath := f.Name()
	_ = f.Close()
	defer os.Remove(outPath)

	prefix := "[" + s.address + "] "
	fmt.Fprintf(s.progress, "%s%s: %s\n", prefix, s.action, oneLine(s.command))
	stream := newStreamer(s.progress, prefix, stderrTail)
	defer stream.flush()

	runCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd, captured := e.process(runCtx, s, stdin, outPath, stream)

	out := &runOutcome{command: s.command, exitCode: -1}
	start := e.now()
	fail := func(reason string, err error) error {
		stream.flush()
		return &StepError{Address: s.address, Action: s.action, Command: s.command,
			ExitCode: out.exitCode, Reason: reason, Stderr: stream.tail(), Err: err}
	}
	// Start fails, starting nothing, when runCtx already ended: the switch
	// below reports that as a cancellation or a timeout.
	done, waitErr := e.start(cmd)
	if errors.Is(waitErr, ErrKilled) {
		return out, &stoppedError{msg: fmt.Sprintf("component %s: %s command %q not started", s.address, s.action, s.command), cause: ErrKilled}
	}
	if waitErr != nil && runCtx.Err() == nil {
		return out, fail("could not start: "+waitErr.Error()+" (is sh on PATH and the directory "+s.dir+" present?)", waitErr)
	}
	var exit proc.Exit // none when it did not start
	if waitErr == nil {
		exit, waitErr = cmd.WaitExit()
		done()
	}
	out.duration = e.now().Sub(start)
	out.exitCode = exit.Status()
	stream.flush()

	switch {
	case e.wasKilled() && ctx.Err() == nil && (waitErr != nil || exit.Err() != nil):
		fmt.Fprintf(s.progress, "%skilled after %s\n", prefix, out.duration.Round(time.Millisecond))
		return out, &stoppedError{msg: fmt.Sprintf("component %s: %s command %q killed", s.address, s.action, s.command), cause: ErrKilled}
	case ctx.Err() != nil:
		fmt.Fprintf(s.progress, "%scancelled after %s\n", prefix, out.duration.Round(time.Millisecond))
		return out, stopped(ctx, fmt.Sprintf("component %s: %s command %q stopped", s.address, s.action, s.command))
	case runCtx.Err() != nil:
		return out, fail(fmt.Sprintf("timed out after %s: raise command.timeout in deployer.yaml or make the command faster", s.timeout), context.DeadlineExceeded)
	case waitErr != nil && !errors.Is(waitErr, proc.ErrWaitDelay):
		return out, fail("failed: "+waitErr.Error(), waitErr)
	case exit.Err() != nil && out.exitCode >= 0:
		return out, fail(fmt.Sprintf("exited with code %d", out.exitCode), exit.Err())
	case exit.Err() != nil:
		return out, fail("was killed: "+exit.String(), exit.Err())
	}

	if captured != nil {
		if captured.Over {
			return out, fail(fmt.Sprintf("printed more than %d bytes on stdout: print one JSON object of the live state", captured.Max), nil)
		}
		out.stdout = captured.Bytes() // "done" is read's to say, once it parsed this
		return out, nil
	}
	outputs, err := readOutputs(outPath)
	if err != nil {
		return out, fail(err.Error(), err)
	}
	out.outputs = outputs
	fmt.Fprintf(s.progress, "%s%s done in %s\n", prefix, s.action, out.duration.Round(time.Millisecond))
	return out, nil
}

// process is the process of s: `sh -c` of its command in s.dir, the
// payload on stdin, DEPLOYER_OUTPUTS naming outPath, its output streamed,
// or with s.captureStdout its stdout kept (captured, within
// inputfile.MaxOutputsBytes).
func (e *Engine) process(ctx context.Context, s runSpec, stdin []byte, outPath string, stream *streamer) (cmd *proc.Cmd, captured *proc.Capped) {
	cmd = proc.Command(ctx, "sh", "-c", s.command)
	grace := e.grace
	if s.grace > 0 {
		grace = s.grace
	}
	cmd.Grace = grace
	cmd.Dir = s.dir
	cmd.Env = s.payload.environ(proc.Environ(proc.UserCommand, e.environ()), outPath)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = stream.stdout()
	if s.captureStdout {
		captured = &proc.Capped{Max: inputfile.MaxOutputsBytes}
		cmd.Stdout = captured
	}
	cmd.Stderr = stream.stderr()
	// A background child that keeps stdout open must not hang the deploy.
	cmd.WaitDelay = grace
	return cmd, captured
}

// readOutputs parses the outputs file: empty (or only whitespace) means no
// outputs; anything else must be one JSON object.
func readOutputs(path string) (map[string]any, error) {
	b, err := inputfile.Read(path, "outputs file", inputfile.MaxOutputsBytes)
	if err != nil {
		if inputfile.IsLimit(err) {
			return nil, fmt.Errorf("wrote an unusable $DEPLOYER_OUTPUTS file: %w", err)
		}
		return nil, fmt.Errorf("wrote no readable $DEPLOYER_OUTPUTS file: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		// The file is not quoted: it may hold a secret the masker cannot know yet.
		return nil, fmt.Errorf("wrote an invalid $DEPLOYER_OUTPUTS file of %d bytes (%v): write one JSON object such as {\"url\":\"http://...\"}", len(b), err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("wrote a $DEPLOYER_OUTPUTS file holding a JSON %s, not an object: write one JSON object such as {\"url\":\"http://...\"}", jsonType(v))
	}
	return m, nil
}

// oneLine shows a (possibly multi-line) command on one progress line.
func oneLine(cmd string) string {
	s := strings.Join(strings.Fields(cmd), " ")
	const n = 200
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	default:
		return "null"
	}
}
