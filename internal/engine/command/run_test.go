package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

func TestTimeoutFailsTheStep(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	st := step("web/slow", plan.Create, Spec{Create: "sleep 30", Timeout: 100 * time.Millisecond}, nil)
	results, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Fatalf("Apply error = %v, want a timeout naming 100ms", err)
	}
	if results[0].Status != engine.StatusFailed {
		t.Errorf("status = %q, want failed", results[0].Status)
	}
}

// cancelAfter runs steps and cancels the context once progress shows "ready".
func cancelAfter(t *testing.T, e *Engine, st plan.Step) (string, []engine.Status, error) {
	t.Helper()
	progress := watching("] ready\n")
	in := inputs(t, progress)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-progress.notify:
			cancel()
		case <-ctx.Done():
		}
	}()
	results, err := apply(e, ctx, []plan.Step{st, step("web/after", plan.Create, Spec{Create: "touch after"}, nil)}, in)
	var statuses []engine.Status
	for _, r := range results {
		statuses = append(statuses, r.Status)
	}
	if exists(join(in.Dir, "after")) {
		t.Error("a step started after cancellation")
	}
	return in.Dir, statuses, err
}

func TestCancelSendsSIGTERMToTheProcessGroup(t *testing.T) {
	// The script and its background child both trap TERM and leave a marker.
	script := `
trap 'echo parent > parent.term; exit 143' TERM
sh -c 'trap "echo child > child.term; exit 0" TERM; echo ready; while :; do sleep 0.05; done' &
wait`
	st := step("web/site", plan.Create, Spec{Create: script}, nil)
	dir, statuses, err := cancelAfter(t, testEngine(), st)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply error = %v, want context.Canceled", err)
	}
	if len(statuses) != 1 || statuses[0] != engine.StatusCancelled {
		t.Errorf("statuses = %v, want [cancelled]", statuses)
	}
	for _, marker := range []string{"parent.term", "child.term"} {
		if !exists(join(dir, marker)) {
			t.Errorf("%s missing: SIGTERM did not reach the process group", marker)
		}
	}
}

func TestCancelKillsWhatIgnoresSIGTERM(t *testing.T) {
	script := `trap '' TERM; echo ready; while :; do sleep 0.05; done`
	st := step("web/stubborn", plan.Create, Spec{Create: script}, nil)
	// Returns only if SIGKILL follows the ignored SIGTERM after the grace period.
	_, statuses, err := cancelAfter(t, New(WithGrace(50*time.Millisecond)), st)
	if !errors.Is(err, context.Canceled) || len(statuses) != 1 || statuses[0] != engine.StatusCancelled {
		t.Errorf("Apply = %v, %v; want context.Canceled and [cancelled]", statuses, err)
	}
}

func TestCancelledContextStartsNothing(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := step("web/site", plan.Create, Spec{Create: "touch ran"}, nil)
	results, err := apply(testEngine(), ctx, []plan.Step{st}, in)
	if !errors.Is(err, context.Canceled) || len(results) != 0 || exists(join(in.Dir, "ran")) {
		t.Errorf("Apply = %v, %v; want context.Canceled and nothing run", results, err)
	}
}

func TestOutputIsStreamedWithTheAddressPrefix(t *testing.T) {
	progress := &syncBuffer{}
	in := inputs(t, progress)
	st := step("web/site", plan.Create, Spec{
		Create: `echo building; printf 'two\nlines\n'; printf 'no newline at end' >&2`,
	}, nil)
	if _, err := apply(testEngine(), context.Background(), []plan.Step{st}, in); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got := progress.String()
	for _, line := range []string{
		"[web/site] create: echo building;",
		"[web/site] building\n",
		"[web/site] two\n[web/site] lines\n",
		"[web/site] no newline at end\n",
		"[web/site] create done in ",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("progress lacks %q; got:\n%s", line, got)
		}
	}
}

func TestStderrTailKeepsTheLastLines(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	st := step("web/site", plan.Create, Spec{
		Create: `i=1; while [ $i -le 15 ]; do echo "line $i" >&2; i=$((i+1)); done; exit 1`,
	}, nil)
	_, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("Apply error = %v, want *StepError", err)
	}
	if len(se.Stderr) != stderrTail || se.Stderr[0] != "line 6" || se.Stderr[stderrTail-1] != "line 15" {
		t.Errorf("stderr tail = %q, want lines 6..15", se.Stderr)
	}
}

func TestBackgroundChildHoldingStdoutDoesNotHang(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	// The child keeps stdout open until the test ends: without the wait delay
	// Apply would never return.
	st := step("web/daemon", plan.Create, Spec{
		Create: `(while [ -d "$PWD" ] && [ ! -f "$PWD/release" ]; do sleep 0.05; done) & echo '{"started":true}' > "$DEPLOYER_OUTPUTS"`,
	}, nil)
	t.Cleanup(func() { _ = os.WriteFile(join(in.Dir, "release"), nil, 0o644) })
	results, err := apply(New(WithGrace(100*time.Millisecond)), context.Background(), []plan.Step{st}, in)
	if err != nil || results[0].Status != engine.StatusReady || results[0].Outputs["started"] != true {
		t.Errorf("Apply = %+v, %v; want ready with outputs {started: true}", results, err)
	}
}

func TestCarriageReturnStartsAPrefixedLine(t *testing.T) {
	progress := &syncBuffer{}
	in := inputs(t, progress)
	st := step("web/site", plan.Create, Spec{
		Create: `printf 'ok\r::error::injected\r\nnext\n\rprogress 1\rprogress 2\r\n'`,
	}, nil)
	if _, err := apply(testEngine(), context.Background(), []plan.Step{st}, in); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got := progress.String()
	want := "[web/site] ok\n[web/site] ::error::injected\n[web/site] next\n[web/site] progress 1\n[web/site] progress 2\n"
	if !strings.Contains(got, want) || strings.Contains(got, "\r") {
		t.Errorf("progress:\n%q\nwant it to contain\n%q", got, want)
	}
}

func TestLearnSeesOutputsBeforeTheDependentStarts(t *testing.T) {
	progress := &syncBuffer{}
	in := inputs(t, progress)
	var learned []string
	in.Learn = func(addr string, outputs map[string]any) {
		learned = append(learned, addr+" "+fmt.Sprint(outputs["password"]))
		fmt.Fprintf(in.Progress, "learned %s\n", addr)
	}
	steps := []plan.Step{
		step("db/main", plan.Create, Spec{Create: `printf '{"password":{"secret":true,"value":"pw-123456"}}' > "$DEPLOYER_OUTPUTS"`}, nil),
		step("app/web", plan.Create, Spec{Create: `echo "dep password $DEPLOYER_DEP_DB_MAIN_PASSWORD"`}, nil, "db/main"),
	}
	if _, err := apply(testEngine(), context.Background(), steps, in); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got := progress.String()
	if len(learned) != 2 || !strings.Contains(learned[0], "db/main map[secret:true value:pw-123456]") {
		t.Errorf("learned %q", learned)
	}
	if i, j := strings.Index(got, "learned db/main"), strings.Index(got, "[app/web] create:"); i < 0 || j < i {
		t.Errorf("the outputs should be learned before the dependent starts:\n%s", got)
	}
	if !strings.Contains(got, "[app/web] dep password pw-123456\n") {
		t.Errorf("a secret-marked output should reach the dependent unwrapped:\n%s", got)
	}
}
