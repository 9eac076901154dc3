package core

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// ErrDeclined: the user did not confirm (a plan, a restore): nothing was
// written.
var ErrDeclined = errors.New("apply cancelled: the plan was not confirmed")

// Deps are the collaborators of the use cases on a stack's state, built by
// the CLI from deployer.yaml.
type Deps struct {
	// Locks and Store are the backends, opened; or Open opens them.
	Locks *lockmgr.Manager
	Store *statestore.Store
	// Open, when set, opens the lock and state backends once, on the first
	// use case that needs them, and after the engines' preflight: a missing
	// Pulumi CLI stops a deploy before any backend is touched
	// (docs/design.md#the-main-job). The use cases that take no lock (plan,
	// history) may get a nil Manager. Its error is the use case's.
	Open     func(ctx context.Context) (*lockmgr.Manager, *statestore.Store, error)
	Audit    *slog.Logger
	Now      func() time.Time
	Progress io.Writer // stderr
	Getenv   func(string) string
	// Dir is where an errored state is saved when the state write fails
	// after infrastructure changed (docs/design.md#state-writes); default ".".
	Dir string
	// Observer receives finished deployments for metrics; nil discards them.
	Observer Observer
	// Masker learns the secret values of the config and hides them in the
	// engines' progress and in recorded errors (docs/secrets.md); default:
	// a Masker of its own.
	Masker *secrets.Masker
}

// Core is the ground of the use cases of one command: its Deps, with the
// backends opened once.
type Core struct {
	Deps

	mu      sync.Mutex
	opened  bool  // Deps.Open was called
	openErr error // and failed
}

// New returns a Core; zero fields of d take defaults.
func New(d Deps) *Core {
	d.Audit = cmp.Or(d.Audit, slog.New(slog.DiscardHandler))
	d.Progress = cmp.Or(d.Progress, io.Discard)
	d.Dir = cmp.Or(d.Dir, ".")
	d.Observer = cmp.Or(d.Observer, Observer(nopObserver{}))
	d.Masker = cmp.Or(d.Masker, secrets.NewMasker())
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	return &Core{Deps: d}
}

// Open opens the backends with Deps.Open, once; without Open, Locks and
// Store were given.
func (c *Core) Open(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Deps.Open != nil && !c.opened {
		c.opened = true
		c.Locks, c.Store, c.openErr = c.Deps.Open(ctx)
	}
	return c.openErr
}
