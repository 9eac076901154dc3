package termui

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RenderState prints st (res.State, masked or not) on w for `state show`:
// JSON with asJSON, else its metadata, a table of its resources with the
// components the newest deployment failed to create or import, and that
// deployment when it did not succeed.
func RenderState(ios *IOStreams, w io.Writer, st *statestore.State, res *stateops.ShowStateResult, asJSON bool) error {
	if asJSON {
		data, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(sanitize.JSON(append(data, '\n')))
		return err
	}
	line := sanitize.Masked{Mask: ios.Mask}.Line // stored data
	fmt.Fprintf(w, "Stack:       %s\nEnvironment: %s\nSerial:      %d\nLineage:     %s\nUpdated:     %s by %s\nLocation:    %s\n",
		line(st.Metadata.Stack), line(st.Metadata.Environment), st.Serial, line(st.Lineage),
		st.Metadata.LastUpdated.UTC().Format(time.RFC3339), OrDash(line(st.Metadata.LastUpdatedBy)), line(res.Location))
	fmt.Fprintf(w, "Checksums:   resources %s, outputs %s (verified)\n\n", line(st.Checksums.Resources), line(st.Checksums.Outputs))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tKIND\tSTATUS\tVERSION\tUPDATED\tOUTPUTS")
	addrs := slices.Sorted(maps.Keys(st.Resources))
	for _, a := range addrs {
		r := st.Resources[a]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", line(a), line(r.Kind), line(string(r.Status)), r.Lifecycle.Version,
			r.Lifecycle.LastUpdated.UTC().Format(time.RFC3339), len(r.Outputs))
	}
	if f := res.Failure; f != nil {
		for _, a := range f.NotCreated {
			fmt.Fprintf(tw, "%s\t-\tfailed (create)\t-\t%s\t-\n", line(a), f.Deployment.Timestamp.UTC().Format(time.RFC3339))
		}
		for _, a := range f.NotImported {
			fmt.Fprintf(tw, "%s\t-\tfailed (import)\t-\t%s\t-\n", line(a), f.Deployment.Timestamp.UTC().Format(time.RFC3339))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Failure != nil {
		PrintFailure(w, res.Failure)
	}
	return nil
}
