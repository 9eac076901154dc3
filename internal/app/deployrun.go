package app

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
)

// ExitSkipped is the exit code of a deploy --run-id skipped because an
// upstream stack of its run did not succeed (docs/exit-codes.md).
const ExitSkipped = 7

// DefaultWaitTimeout bounds deploy --run-id's wait for its upstream stacks.
const DefaultWaitTimeout = time.Hour

// RunFlags are deploy's flags of one job of a CI run: --run-id,
// --run-attempt, --upstream and --wait-timeout
// (docs/many-stacks.md#one-job-per-stack-the-matrix).
type RunFlags struct {
	ID          string
	Attempt     int
	Upstream    []string
	WaitTimeout time.Duration
}

func (r *RunFlags) Bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.ID, "run-id", "", "deploy as one job of the CI run ID (GitHub's run id): wait for --upstream, record the run (docs/many-stacks.md)")
	cmd.Flags().IntVar(&r.Attempt, "run-attempt", 0, "with --run-id: the run's attempt (default $GITHUB_RUN_ATTEMPT, else 1)")
	cmd.Flags().StringSliceVar(&r.Upstream, "upstream", nil, "with --run-id: the stacks of the run this one reads (the matrix entry's upstream; repeats, or a comma list)")
	cmd.Flags().DurationVar(&r.WaitTimeout, "wait-timeout", 0, "with --run-id: wait up to DUR for the upstream stacks' deployments of the run (default 1h; 0 looks once)")
}

// Check refuses the run flags without --run-id, and a bad id or attempt;
// it takes the attempt from GITHUB_RUN_ATTEMPT when not given.
func (r *RunFlags) Check(cmd *cobra.Command, getenv func(string) string) error {
	if r.ID == "" {
		for _, n := range []string{"run-id", "run-attempt", "upstream", "wait-timeout"} {
			if cmd.Flags().Changed(n) {
				return &exitcode.UsageError{Msg: "--" + n + " needs a non-empty --run-id"}
			}
		}
		return nil
	}
	if err := CheckRunID(r.ID); err != nil {
		return err
	}
	if r.WaitTimeout < 0 {
		return &exitcode.UsageError{Msg: "--wait-timeout must not be negative"}
	}
	if !cmd.Flags().Changed("wait-timeout") {
		r.WaitTimeout = DefaultWaitTimeout
	}
	if !cmd.Flags().Changed("run-attempt") {
		r.Attempt = 1
		if n, err := strconv.Atoi(getenv("GITHUB_RUN_ATTEMPT")); err == nil && n > 0 {
			r.Attempt = n
		}
	}
	if r.Attempt < 1 {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--run-attempt must be at least 1, got %d", r.Attempt)}
	}
	var ups []string
	for _, u := range r.Upstream {
		if u = strings.TrimSpace(u); u != "" {
			ups = append(ups, u)
		}
	}
	r.Upstream = ups
	return nil
}

// CheckRunID refuses a --run-id over 100 characters or with spaces ("" is
// no run).
func CheckRunID(id string) error {
	if len(id) > 100 || strings.ContainsAny(id, " \t\r\n") {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--run-id %q: at most 100 characters and no spaces", id)}
	}
	return nil
}

// Request is the deploy.Run of the flags; nil without --run-id. An
// upstream naming the stack itself is refused.
func (r *RunFlags) Request(stack string) (*deploy.Run, error) {
	if r.ID == "" {
		return nil, nil
	}
	for _, u := range r.Upstream {
		if u == stack {
			return nil, &exitcode.UsageError{Msg: fmt.Sprintf("--upstream names %s, the stack being deployed", stack)}
		}
	}
	return &deploy.Run{ID: r.ID, Attempt: r.Attempt, Upstream: r.Upstream, WaitTimeout: r.WaitTimeout}, nil
}

// RunOutcome renders what only a run's deploy has to say: the stack
// skipped because of an upstream (then the error is exit 7, the message
// printed here), or nothing applied because the run already deployed it.
// Other outcomes and errors pass through.
func RunOutcome(w io.Writer, t deploy.Target, out *deploy.Outcome, err error) error {
	var skipped *deploy.SkippedError
	if errors.As(err, &skipped) {
		fmt.Fprintf(w, "%s/%s %s. Nothing was deployed; re-run this job once %s has succeeded in run %s.\n",
			t.Stack, t.Env, skipped.Error(), skipped.Upstream.Stack, skipped.RunID)
		return &exitcode.ExitCodeError{Code: ExitSkipped}
	}
	if err == nil && out != nil && out.AlreadyApplied {
		fmt.Fprintf(w, "%s/%s was already deployed in this run and nothing changed since: nothing written.\n", t.Stack, t.Env)
	} else if err == nil && out != nil && out.Plan != nil && !out.Plan.HasChanges() && out.Deployment.DeploymentID != "" {
		fmt.Fprintf(w, "No changes; deployment %s recorded for run %s (serial %d), for the stacks of the run that read this one.\n",
			out.Deployment.DeploymentID, out.Deployment.RunID, out.Head.Serial)
	}
	return err
}

// SkippedExit is exit 7 for a skipped deploy whose --json result is
// printed already; other errors pass through.
func SkippedExit(err error) error {
	var skipped *deploy.SkippedError
	if errors.As(err, &skipped) {
		return &exitcode.ExitCodeError{Code: ExitSkipped}
	}
	return err
}
