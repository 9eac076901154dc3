package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/webui"
)

// UIConfig binds the UI's reads to the use cases of `state locks`,
// `stacks`, `state show` and `history` over the configured backends: the
// lock backend of the project (deployer.yaml, or DEPLOYER_BACKEND_LOCK)
// opened once, read-only; each stack's state backend opened on first use,
// with secrets left sealed.
func UIConfig(ctx context.Context, f *Factory) (webui.Config, error) {
	cfg, err := ProjectConfig(f, "ui")
	discover := func() (*stacks.Set, error) { return stacks.Discover(".", stacks.Options{Load: f.StackConfig}) }
	if err != nil {
		// A repository root that holds stacks but no deployer.yaml of its own.
		if _, derr := discover(); derr != nil {
			return webui.Config{}, err
		}
		cfg = nil
	}
	out := webui.Config{Stacks: discover, Mask: f.IO.Mask, Now: f.Now}
	if cfg != nil {
		m, err := f.Locks(ctx, cfg, ReadOnly)
		if err != nil {
			return webui.Config{}, err
		}
		locking := stateops.NewLocking(stateops.LockDeps{Locks: m, Observer: f.Metrics(ctx, cfg)})
		out.Locks = []webui.LockSource{{Name: cfg.Backend.Lock, List: func(ctx context.Context) (*stateops.LocksResult, error) {
			return locking.Locks(ctx, stateops.LocksRequest{})
		}}}
	}
	var mu sync.Mutex
	stores := map[string]*statestore.Store{}
	store := func(ctx context.Context, stack string) (*statestore.Store, error) {
		c := cfg
		if set, err := discover(); err == nil {
			if st := set.Get(stack); st != nil {
				c = st.Config
			}
		}
		if c == nil {
			return nil, fmt.Errorf("no stack %s under the working directory (see deployer stacks)", stack)
		}
		// A relative file:// URL is relative to its deployer.yaml: the
		// file's path is part of the key.
		key := c.Path + "\x00" + c.Backend.State
		mu.Lock()
		defer mu.Unlock()
		if s := stores[key]; s != nil {
			return s, nil
		}
		s, err := f.Store(ctx, c, ReadSealed)
		if err != nil {
			return nil, err
		}
		stores[key] = s
		return s, nil
	}
	out.State = func(ctx context.Context, stack, env string, serial int64) (*stateops.ShowStateResult, error) {
		s, err := store(ctx, stack)
		if err != nil {
			return nil, err
		}
		return stateops.ShowState(ctx, stateops.StateDeps{Store: s}, stateops.ShowStateRequest{Target: deploy.Target{Stack: stack, Env: env}, Serial: serial})
	}
	out.History = func(ctx context.Context, stack, env string) (*stateops.HistoryResult, error) {
		s, err := store(ctx, stack)
		if err != nil {
			return nil, err
		}
		return stateops.New(core.New(core.Deps{Store: s})).History(ctx, stateops.HistoryRequest{Target: deploy.Target{Stack: stack, Env: env}, Limit: uiHistoryLimit})
	}
	return out, nil
}

// uiHistoryLimit is how many history entries a stack/environment page shows.
const uiHistoryLimit = 50
