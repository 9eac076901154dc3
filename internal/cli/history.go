package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/sanitize"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// HistoryOptions are the options of `deployer history`.
type HistoryOptions struct {
	IO *IOStreams

	// From argv and the global flags.
	Target targetFlags
	Limit  int
	JSON   bool

	// Config loads deployer.yaml, or the defaults and DEPLOYER_BACKEND_*
	// without one (docs/design.md#read-only-commands).
	Config func() (*config.Config, error)
	// History is the use case: it opens the state backend (no secrets key
	// needed) and calls stateops.Ops.History (bound by NewCmdHistory; a
	// run test sets a fake).
	History func(ctx context.Context, cfg *config.Config, req stateops.HistoryRequest) (*stateops.HistoryResult, error)
}

// NewCmdHistory returns `deployer history`; runF replaces runHistory in tests.
func NewCmdHistory(f *Factory, runF func(context.Context, *HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return projectConfig(f, "history") },
		History: func(ctx context.Context, cfg *config.Config, req stateops.HistoryRequest) (*stateops.HistoryResult, error) {
			store, err := f.Store(ctx, cfg, ReadSealed) // history shows no secret: no key needed
			if err != nil {
				return nil, err
			}
			return stateops.New(core.New(core.Deps{Store: store})).History(ctx, req)
		},
	}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List state snapshots and deployments, newest first",
		Long: heredoc.Doc(`
			Lists the history snapshots joined with the deployment records, newest first. A snapshot whose
			state.json write never completed is marked uncommitted (docs/state-format.md#history-snapshots);
			an abandoned deployment shows when it started, and a failed one its error on a line under its row
			(whitespace folded, long ones shortened in the middle; --json has it whole, as error). Read-only.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if opts.Limit < 0 {
				return &UsageError{Msg: fmt.Sprintf("--limit %d: want 0 (all entries) or a positive number", opts.Limit)}
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, withTarget(&opts.Target, opts.Config, runHistory))
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "show at most N entries (0: all)")
	return cmd
}

// runHistory resolves the target, calls the use case and prints its entries
// (a table, or JSON with --json). A state.json that failed verification
// fails the command after the snapshots are printed, saying how to restore
// one.
func runHistory(ctx context.Context, opts *HistoryOptions, cfg *config.Config, t deploy.Target) error {
	res, err := opts.History(ctx, cfg, stateops.HistoryRequest{Target: t, Limit: opts.Limit})
	if err != nil {
		return err
	}
	var stateErr error
	if res.StateErr != nil {
		stateErr = told(res.StateErr, fmt.Sprintf("the snapshots above are intact: restore one with deployer restore -s %s -e %s --serial N", t.Stack, t.Env))
	}
	if opts.JSON {
		return errors.Join(opts.IO.PrintJSON(res.Entries), stateErr)
	}
	// The table is aligned first, then each failed deployment's error goes
	// on a line under its row (a line without cells would break tabwriter's
	// columns in two).
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tTIME\tTYPE\tSTATUS\tDEPLOYMENT\tBY\tCOMMIT\tDURATION\tCHANGES")
	line := sanitize.Masked{Mask: opts.IO.Mask}.Line // stored data
	for _, e := range res.Entries {
		changes, typ := "-", orDash(e.Type)
		if e.Changed != nil {
			// What left the state without a delete (state rm, a gone
			// component of a refresh) is "forgot", not counted as -N.
			deleted := max(0, e.Changed.Deleted-len(e.Removed))
			changes = fmt.Sprintf("+%d ~%d -%d", e.Changed.Created, e.Changed.Updated, deleted)
			if e.Type == "state-rm" {
				changes = ""
			}
		}
		if len(e.Deleted) > 0 {
			verb := " deleted "
			if e.Type == "destroy" {
				verb = " destroyed "
			}
			changes += verb + strings.Join(e.Deleted, ", ")
		}
		if len(e.Moved) > 0 {
			changes += " moved " + strings.Join(e.Moved, ", ")
		}
		if len(e.Removed) > 0 {
			changes += " forgot " + strings.Join(e.Removed, ", ")
		}
		changes = strings.TrimSpace(changes)
		if len(e.Imported) > 0 {
			changes += " imported " + strings.Join(e.Imported, ", ")
		}
		if e.RestoredFrom > 0 {
			typ = fmt.Sprintf("restore (from %d)", e.RestoredFrom)
		}
		commit := e.GitCommit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		// An abandoned deployment shows when it started (its snapshot is
		// the later write that recorded it) and at least how long it ran.
		at, took := e.Time, fmt.Sprintf("%.1fs", e.Duration)
		if e.Status == statestore.DeploymentAbandoned && !e.Started.IsZero() {
			at, took = e.Started, ">="+took
		}
		typ = line(typ)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Serial, at.UTC().Format(time.RFC3339), typ,
			orDash(line(string(e.Status))), orDash(line(e.DeploymentID)), orDash(line(e.TriggeredBy)), orDash(line(commit)), took, line(changes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rows := strings.SplitAfter(table.String(), "\n")
	var out strings.Builder
	out.WriteString(rows[0])
	for i, e := range res.Entries {
		out.WriteString(rows[i+1])
		if e.Error != "" {
			fmt.Fprintf(&out, "  error: %s\n", errorLine(e.Error))
		}
	}
	_, err = io.WriteString(opts.IO.Out, out.String())
	return errors.Join(err, stateErr)
}
