package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"
)

// RefreshOnlyFunc is the refresh-only use case (deploy.Service.RefreshOnly)
// as plan and deploy bind it; a run test sets a fake.
type RefreshOnlyFunc func(ctx context.Context, req deploy.RefreshOnlyRequest, eng app.EngineOptions) (*deploy.RefreshOutcome, error)

// bindRefreshOnly binds the use case to f: plan's (record false) opens
// the backends read only, without the lock backend.
func bindRefreshOnly(f *app.Factory, readOnly bool) RefreshOnlyFunc {
	return func(ctx context.Context, req deploy.RefreshOnlyRequest, eng app.EngineOptions) (*deploy.RefreshOutcome, error) {
		svc, err := f.Service(ctx, req.Config, app.ServiceOptions{EngineOptions: eng, ReadOnly: readOnly})
		if err != nil {
			return nil, err
		}
		return svc.RefreshOnly(ctx, req)
	}
}

// refuseWithRefreshOnly refuses --refresh-only with any of the flags
// named, which it has no meaning with.
func refuseWithRefreshOnly(cmd *cobra.Command, on bool, flags ...string) error {
	if !on {
		return nil
	}
	for _, n := range flags {
		if cmd.Flags().Changed(n) {
			return &exitcode.UsageError{Msg: "--refresh-only cannot be used with --" + n + " (docs/operations.md#refresh-only)"}
		}
	}
	return nil
}

// refreshOnlyRun is one plan or deploy --refresh-only as the CLI runs it.
type refreshOnlyRun struct {
	IO          *termui.IOStreams
	JSON        bool
	Record, Yes bool
	Run         RefreshOnlyFunc
	Engine      app.EngineOptions
	// DetailedExitcode: exit 2 when there is drift (plan).
	DetailedExitcode bool
}

// run plans the refresh of t, shows it and, when recording, asks (unless
// --yes) and renders what was recorded.
func (r refreshOnlyRun) run(ctx context.Context, req deploy.RefreshOnlyRequest) error {
	t := req.Target
	req.Record = r.Record
	ask := r.Record && !r.Yes
	if ask && !r.IO.CanPrompt() {
		return &exitcode.UsageError{Msg: "deploy --refresh-only needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
	}
	req.ShowPlan = func(p *deploy.RefreshPlan) error {
		if r.JSON {
			return nil
		}
		termui.RenderRefreshPlan(r.IO.Out, p)
		return nil
	}
	if ask {
		req.Confirm = func(*deploy.RefreshPlan) (bool, error) {
			return r.IO.Confirm(fmt.Sprintf("Record what is live as the state of %s/%s (nothing else runs)?", t.Stack, t.Env))
		}
	}
	out, err := r.Run(ctx, req, r.Engine)
	if r.JSON && out != nil {
		j := refreshJSON{RefreshPlan: out.Plan, Changed: out.Plan.HasChanges(), Status: "no-changes"}
		switch {
		case out.Deployment.DeploymentID != "":
			j.DeploymentID, j.Status, j.Serial = out.Deployment.DeploymentID, string(out.Deployment.Status), out.Head.Serial
		case r.Record && out.Plan.HasChanges():
			j.Status = "not-recorded"
		case out.Plan.HasChanges():
			j.Status = "drift" // plan --refresh-only: what deploy --refresh-only would record
		}
		if jerr := r.IO.PrintJSON(j); jerr != nil {
			return jerr
		}
	} else if err == nil && out != nil && out.Deployment.DeploymentID != "" {
		c := out.Deployment.ResourcesChanged
		fmt.Fprintf(r.IO.Out, "\nRefresh %s recorded: %d updated, %d removed from the state; nothing else ran. State %s/%s is at serial %d.\n",
			out.Deployment.DeploymentID, c.Updated, c.Deleted, t.Stack, t.Env, out.Head.Serial)
	}
	if err == nil && r.DetailedExitcode && out != nil && out.Plan.HasChanges() {
		return &exitcode.ExitCodeError{Code: 2}
	}
	return err
}

// refreshJSON is the --json result of plan and deploy --refresh-only.
type refreshJSON struct {
	*deploy.RefreshPlan
	Changed      bool   `json:"changed"`
	Status       string `json:"status"`
	DeploymentID string `json:"deployment_id,omitempty"`
	Serial       int64  `json:"serial,omitempty"`
}
