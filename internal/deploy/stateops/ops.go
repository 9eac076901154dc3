package stateops

import (
	"context"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Ops runs the state operations of one command on the core.
type Ops struct {
	c *core.Core
	r Reporter
}

// New returns the Ops of c, reporting to no one (WithReporter).
func New(c *core.Core) *Ops { return &Ops{c: c, r: NoReporter{}} }

// WithReporter makes s report what it did to r (nil: no one) and returns s.
func (s *Ops) WithReporter(r Reporter) *Ops {
	if r == nil {
		r = NoReporter{}
	}
	s.r = r
	return s
}

// leaseRun takes t's lease for op as a new deployment, with the git
// commit and branch of dir (a state write records them): the deployment
// id, commit, branch and the lease, or the lease's error.
func (s *Ops) leaseRun(ctx context.Context, t core.Target, op lockmgr.Operation, dir string, timeout time.Duration) (depID, commit, branch string, lease *lockmgr.Holding, err error) {
	depID = core.NewDeploymentID()
	commit, branch = s.c.GitInfo(dir)
	lease, err = s.c.Lease(ctx, lockmgr.LeaseRequest{Key: t.LockKey(), Op: op, DeploymentID: depID,
		GitCommit: commit, GitBranch: branch, Timeout: timeout})
	return depID, commit, branch, lease, err
}
