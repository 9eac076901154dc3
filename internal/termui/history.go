package termui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RenderHistory prints the entries of `deployer history` as a table, each
// failed deployment's error on a line under its row.
func RenderHistory(ios *IOStreams, entries []stateops.HistoryEntry) error {
	// The table is aligned first, then each failed deployment's error goes
	// on a line under its row (a line without cells would break tabwriter's
	// columns in two).
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tTIME\tTYPE\tSTATUS\tDEPLOYMENT\tBY\tCOMMIT\tDURATION\tCHANGES")
	line := sanitize.Masked{Mask: ios.Mask}.Line // stored data
	for _, e := range entries {
		changes, typ := "-", OrDash(e.Type)
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
			OrDash(line(string(e.Status))), OrDash(line(e.DeploymentID)), OrDash(line(e.TriggeredBy)), OrDash(line(commit)), took, line(changes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rows := strings.SplitAfter(table.String(), "\n")
	var out strings.Builder
	out.WriteString(rows[0])
	for i, e := range entries {
		out.WriteString(rows[i+1])
		if e.Error != "" {
			fmt.Fprintf(&out, "  error: %s\n", ErrorLine(e.Error))
		}
	}
	_, err := io.WriteString(ios.Out, out.String())
	return err
}
