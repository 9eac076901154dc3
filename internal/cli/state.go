package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// StateShowOptions are the flags of `deployer state show`.
type StateShowOptions struct {
	Target targetFlags
	Serial int64
	JSON   bool
	// ShowSecrets prints secret values in plain text (asks on a TTY, needs
	// --yes otherwise; audited as state.secrets_shown).
	ShowSecrets bool
	Yes         bool
}

// NewCmdStateShow returns `deployer state show`.
func NewCmdStateShow(f *Factory, runF func(context.Context, *Factory, *StateShowOptions) error) *cobra.Command {
	opts := &StateShowOptions{}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the state of a stack/environment (verified)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runStateShow(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().Int64Var(&opts.Serial, "serial", 0, "show the history snapshot with this serial")
	cmd.Flags().BoolVar(&opts.ShowSecrets, "show-secrets", false, "decrypt and print secret values (asks first; audited)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "with --show-secrets: do not ask")
	return cmd
}

func runStateShow(ctx context.Context, f *Factory, opts *StateShowOptions) error {
	cfg, t, err := f.target(&opts.Target, "state show")
	if err != nil {
		return err
	}
	open := f.SealedStore
	if opts.ShowSecrets {
		open = f.Store
	}
	store, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	var st *statestore.State
	if opts.Serial > 0 {
		st, err = store.Snapshot(ctx, t.Stack, t.Env, opts.Serial)
	} else {
		st, _, err = store.Load(ctx, t.Stack, t.Env)
	}
	if errors.Is(err, statestore.ErrNotFound) {
		return fmt.Errorf("no state for %s/%s in %s: deploy it first (deployer deploy -s %s -e %s)",
			t.Stack, t.Env, store.Backend().Location(t.Stack, t.Env), t.Stack, t.Env)
	}
	if err != nil {
		return err
	}
	w := f.IO.Out
	if opts.ShowSecrets {
		if w, err = f.revealSecrets(t.Stack, t.Env, opts); err != nil {
			return err
		}
	} else {
		st = maskState(st)
	}
	if opts.JSON {
		data, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	fmt.Fprintf(w, "Stack:       %s\nEnvironment: %s\nSerial:      %d\nLineage:     %s\nUpdated:     %s by %s\nLocation:    %s\n",
		st.Metadata.Stack, st.Metadata.Environment, st.Serial, st.Lineage,
		st.Metadata.LastUpdated.UTC().Format(time.RFC3339), orDash(st.Metadata.LastUpdatedBy), store.Backend().Location(t.Stack, t.Env))
	fmt.Fprintf(w, "Checksums:   resources %s, outputs %s (verified)\n\n", st.Checksums.Resources, st.Checksums.Outputs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tKIND\tSTATUS\tVERSION\tUPDATED\tOUTPUTS")
	addrs := make([]string, 0, len(st.Resources))
	for a := range st.Resources {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	for _, a := range addrs {
		r := st.Resources[a]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", a, r.Kind, r.Status, r.Lifecycle.Version,
			r.Lifecycle.LastUpdated.UTC().Format(time.RFC3339), len(r.Outputs))
	}
	return tw.Flush()
}

// StatePushOptions are the flags of `deployer state push`.
type StatePushOptions struct {
	Target      targetFlags
	File        string
	Yes         bool
	LockTimeout time.Duration
}

// NewCmdStatePush returns `deployer state push FILE`: writes an errored state
// saved by a failed deploy as the next serial (docs/design.md#state-writes).
func NewCmdStatePush(f *Factory, runF func(context.Context, *Factory, *StatePushOptions) error) *cobra.Command {
	opts := &StatePushOptions{}
	cmd := &cobra.Command{
		Use:   "push FILE",
		Short: "Write a saved state file (deployer-errored-*.json) as the next serial",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			opts.File = args[0]
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runStatePush(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "write without asking")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, "wait up to DUR for a held lock")
	return cmd
}

func runStatePush(ctx context.Context, f *Factory, opts *StatePushOptions) error {
	cfg, t, err := f.target(&opts.Target, "state push")
	if err != nil {
		return err
	}
	st, err := statestore.ReadFile(opts.File, cfg.Backend.MaxStateSize)
	if err != nil {
		return err
	}
	if !opts.Yes {
		ok, err := f.IO.Confirm(fmt.Sprintf("Write %s (%d resources) as the next serial of %s/%s?", opts.File, len(st.Resources), t.Stack, t.Env))
		if err != nil || !ok {
			return errOr(err, "state push cancelled")
		}
	}
	svc, err := f.Service(ctx, cfg, EngineOptions{})
	if err != nil {
		return err
	}
	head, err := svc.Push(ctx, t, st, opts.LockTimeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Wrote %s as serial %d of %s/%s.\n", opts.File, head.Serial, t.Stack, t.Env)
	return nil
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}
