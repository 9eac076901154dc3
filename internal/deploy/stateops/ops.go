package stateops

import "github.com/deployer-dev/deployer/internal/deploy/core"

// Ops runs the state operations of one command on the core.
type Ops struct {
	c *core.Core
}

// New returns the Ops of c.
func New(c *core.Core) *Ops { return &Ops{c: c} }
