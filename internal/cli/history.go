package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// HistoryOptions are the flags of `deployer history`.
type HistoryOptions struct {
	Target targetFlags
	Limit  int
	JSON   bool
}

// NewCmdHistory returns `deployer history`.
func NewCmdHistory(f *Factory, runF func(context.Context, *Factory, *HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List state snapshots and deployments, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if opts.Limit < 0 {
				return &UsageError{Msg: fmt.Sprintf("--limit %d: want 0 (all entries) or a positive number", opts.Limit)}
			}
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runHistory(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "show at most N entries (0: all)")
	return cmd
}

// historyEntry joins one snapshot with the deployment that wrote it.
type historyEntry struct {
	Serial       int64                        `json:"serial"`
	Time         time.Time                    `json:"time"`
	Snapshot     string                       `json:"snapshot"`
	DeploymentID string                       `json:"deployment_id,omitempty"`
	Type         string                       `json:"type,omitempty"`
	TriggeredBy  string                       `json:"triggered_by,omitempty"`
	GitCommit    string                       `json:"git_commit,omitempty"`
	Status       string                       `json:"status,omitempty"`
	Duration     float64                      `json:"duration_seconds"`
	Changed      *statestore.ResourcesChanged `json:"resources_changed,omitempty"`
	RestoredFrom int64                        `json:"restored_from,omitempty"`
	Uncommitted  bool                         `json:"uncommitted,omitempty"`
}

// statusUncommitted marks a snapshot whose state.json write never completed.
const statusUncommitted = "uncommitted"

func runHistory(ctx context.Context, f *Factory, opts *HistoryOptions) error {
	cfg, t, err := f.target(&opts.Target, "history")
	if err != nil {
		return err
	}
	store, err := f.SealedStore(ctx, cfg) // history shows no secret: no key needed
	if err != nil {
		return err
	}
	snaps, err := store.History(ctx, t.Stack, t.Env, opts.Limit)
	if err != nil {
		return err
	}
	deps := map[int64]statestore.Deployment{}
	head := int64(-1) // serial of state.json; -1 when unknown
	st, _, loadErr := store.Load(ctx, t.Stack, t.Env)
	switch {
	case loadErr == nil:
		head = st.Serial
		for _, d := range st.DeploymentHistory {
			deps[d.Serial] = d
		}
	case errors.Is(loadErr, statestore.ErrNotFound):
		loadErr, head = nil, 0
		if len(snaps) == 0 {
			return fmt.Errorf("no state for %s/%s: nothing deployed yet", t.Stack, t.Env)
		}
	default:
		// A corrupt state.json still leaves the snapshots readable, which is
		// what restore needs: list them, then fail with the load error.
		loadErr = fmt.Errorf("%w\nthe snapshots above are intact: restore one with deployer restore -s %s -e %s --serial N", loadErr, t.Stack, t.Env)
	}
	entries := make([]historyEntry, 0, len(snaps))
	seen := map[int64]bool{}
	for _, sn := range snaps {
		e := historyEntry{Serial: sn.Serial, Time: sn.Time, Snapshot: sn.Name}
		// The snapshot is written before state.json (docs/design.md#state-writes). One that never
		// became state.json (the write of state.json failed or the process
		// died between the two) has a serial above state.json's, or shares
		// its serial with a newer snapshot that did. It stays listed (it may
		// be the only copy of what an apply produced) but is marked.
		if (head >= 0 && sn.Serial > head) || seen[sn.Serial] {
			e.Status, e.Uncommitted = statusUncommitted, true
			entries = append(entries, e)
			continue
		}
		seen[sn.Serial] = true
		d, ok := deps[sn.Serial]
		if !ok {
			// Older than the deployment_history kept in state.json.
			if snap, err := store.Snapshot(ctx, t.Stack, t.Env, sn.Serial); err == nil && len(snap.DeploymentHistory) > 0 && snap.DeploymentHistory[0].Serial == sn.Serial {
				d, ok = snap.DeploymentHistory[0], true
			}
		}
		if ok {
			c := d.ResourcesChanged
			e.DeploymentID, e.Type, e.TriggeredBy, e.GitCommit = d.DeploymentID, d.Type, d.TriggeredBy, d.GitCommit
			e.Status, e.Duration, e.Changed, e.RestoredFrom = d.Status, d.DurationSeconds, &c, d.RestoredFrom
		}
		entries = append(entries, e)
	}
	if opts.JSON {
		return errors.Join(writeJSON(f, entries), loadErr)
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tTIME\tTYPE\tSTATUS\tDEPLOYMENT\tBY\tCOMMIT\tDURATION\tCHANGES")
	for _, e := range entries {
		changes, typ := "-", orDash(e.Type)
		if e.Changed != nil {
			changes = fmt.Sprintf("+%d ~%d -%d", e.Changed.Created, e.Changed.Updated, e.Changed.Deleted)
		}
		if e.RestoredFrom > 0 {
			typ = fmt.Sprintf("restore (from %d)", e.RestoredFrom)
		}
		commit := e.GitCommit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.1fs\t%s\n", e.Serial, e.Time.UTC().Format(time.RFC3339), typ,
			orDash(e.Status), orDash(e.DeploymentID), orDash(e.TriggeredBy), orDash(commit), e.Duration, changes)
	}
	return errors.Join(tw.Flush(), loadErr)
}

// RestoreOptions are the flags of `deployer restore`.
type RestoreOptions struct {
	Target      targetFlags
	Serial      int64
	Timestamp   string
	Yes         bool
	LockTimeout time.Duration
}

// NewCmdRestore returns `deployer restore`.
func NewCmdRestore(f *Factory, runF func(context.Context, *Factory, *RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Write a history snapshot as a new serial (history stays append-only)",
		Example: `  deployer restore -e prod --serial 12
  deployer restore -e prod --timestamp 2024-01-15T14:00:00Z --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if (opts.Serial > 0) == (opts.Timestamp != "") {
				return &UsageError{Msg: "restore needs exactly one of --serial N or --timestamp T (RFC 3339); see deployer history"}
			}
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runRestore(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().Int64Var(&opts.Serial, "serial", 0, "restore the snapshot with this serial")
	cmd.Flags().StringVar(&opts.Timestamp, "timestamp", "", "restore the newest snapshot at or before this RFC 3339 time")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, "wait up to DUR for a held lock")
	return cmd
}

func runRestore(ctx context.Context, f *Factory, opts *RestoreOptions) error {
	cfg, t, err := f.target(&opts.Target, "restore")
	if err != nil {
		return err
	}
	req := deploy.RestoreRequest{Target: t, Serial: opts.Serial, LockTimeout: opts.LockTimeout, Dir: cfg.Dir}
	if opts.Timestamp != "" {
		at, err := time.Parse(time.RFC3339, opts.Timestamp)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("--timestamp %q: want RFC 3339, e.g. 2024-01-15T14:20:00Z", opts.Timestamp)}
		}
		req.At = at
	}
	if !opts.Yes {
		if !f.IO.CanPrompt() {
			return &UsageError{Msg: "restore needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
		}
		req.Confirm = func(snap *statestore.State, cur statestore.Head) (bool, error) {
			fmt.Fprintf(f.IO.ErrOut, "Restore %s/%s to the snapshot of serial %d (%d resources, written %s) as serial %d.\n",
				t.Stack, t.Env, snap.Serial, len(snap.Resources), snap.Metadata.LastUpdated.UTC().Format(time.RFC3339), cur.Serial+1)
			if snap.Serial > cur.Serial {
				fmt.Fprintf(f.IO.ErrOut, "Serial %d never became state.json (its write did not complete; history shows it as uncommitted): it holds what that apply produced.\n", snap.Serial)
			}
			return f.IO.Confirm("Restore?")
		}
	}
	svc, err := f.Service(ctx, cfg, EngineOptions{})
	if err != nil {
		return err
	}
	head, st, err := svc.Restore(ctx, req)
	if err != nil {
		return err
	}
	f.summarize(fmt.Sprintf("### %s: %s/%s\n\nRestored the snapshot of serial %d as serial %d (%d resources), deployment `%s`. The infrastructure was not changed.\n\n",
		f.command, t.Stack, t.Env, st.DeploymentHistory[0].RestoredFrom, head.Serial, len(st.Resources), st.DeploymentHistory[0].DeploymentID))
	f.setOutputs(ghactions.Output{Name: "serial", Value: strconv.FormatInt(head.Serial, 10)},
		ghactions.Output{Name: "deployment-id", Value: st.DeploymentHistory[0].DeploymentID})
	if f.JSON {
		return writeJSON(f, map[string]any{"stack": t.Stack, "environment": t.Env, "serial": head.Serial,
			"restored_from": st.DeploymentHistory[0].RestoredFrom, "resources": len(st.Resources)})
	}
	fmt.Fprintf(f.IO.Out, "Restored %s/%s from serial %d as serial %d (%d resources). The infrastructure was not changed: run deployer plan to compare.\n",
		t.Stack, t.Env, st.DeploymentHistory[0].RestoredFrom, head.Serial, len(st.Resources))
	return nil
}
