// Package deploy is deployer's main use case (docs/design.md#the-main-job): lock -> load -> plan ->
// confirm -> apply -> save -> release, for deploy, destroy and import, and
// the use cases that share its planning: plan, plan --preview and
// --refresh, deploy --refresh-only; with a CI run's job (--run-id), its
// wait for the upstream stacks and the record of its failure.
//
// A use case takes ctx and its request struct (XRequest) and returns its
// result, as a method of Service. The Service stands on the use cases'
// core (internal/deploy/core: target, lease, load, save), which the state
// operations (internal/deploy/stateops) share; it hands the plan's steps
// to internal/executor and talks back to the user through one port, UI.
package deploy

import (
	"sync"
	"sync/atomic"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
)

// Deps are the collaborators of Service, built by the CLI from
// deployer.yaml: the core's (backends, audit, clock, progress, environment,
// errored-state directory, observer, masker) and the deploy's own.
type Deps struct {
	core.Deps
	Engines []engine.Engine
	// ReplaceOn gives the config paths that force replacement per kind;
	// nil takes them from the engines' kind catalogs.
	ReplaceOn func(kind string) []string
	// UI shows the plan, asks for confirmation and hears each step start
	// and end (the live progress of a deploy, docs/command-kind.md#progress);
	// nil: NoUI.
	UI UI
	// Reporter hears each plan and apply once done (docs/design.md#reporting);
	// nil: NoReporter.
	Reporter Reporter
	// Version is the deployer version a saved plan binds (docs/plan.md
	// "Saved plans").
	Version string
}

// Service runs the deploy use cases on the core.
type Service struct {
	c *core.Core         // the backends, the lease, the state's load and save
	d Deps               // the deploy's own fields: Engines, ReplaceOn, UI, Version
	x *executor.Executor // applies the plans

	mu       sync.Mutex
	checked  bool // the engines' preflight passed
	checkErr error

	prepared map[prepareKey]*prepared // each target's config, resolved once

	// plansBuilt counts the plans built (buildPlan): a deploy builds one,
	// two when the state moved before its lease (docs/design.md#read-once-plan-once).
	plansBuilt atomic.Int64
}

// New returns a Service; zero fields of d take defaults.
func New(d Deps) *Service {
	if d.ReplaceOn == nil {
		d.ReplaceOn = replaceOn(d.Engines)
	}
	if d.UI == nil {
		d.UI = NoUI{}
	}
	if d.Reporter == nil {
		d.Reporter = NoReporter{}
	}
	c := core.New(d.Deps)
	s := &Service{c: c, d: d}
	s.x = &executor.Executor{Engines: d.Engines, Steps: d.UI, Learn: c.LearnOutputs}
	return s
}

// Core is the ground the Service stands on, which the state operations
// (internal/deploy/stateops) share.
func (s *Service) Core() *core.Core { return s.c }

// Target is what a command acts on (core.Target), as the requests of the
// use cases name it.
type Target = core.Target

// TargetError: the target names what deployer.yaml does not have
// (core.TargetError).
type TargetError = core.TargetError
