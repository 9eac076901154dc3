package webui

import (
	"context"
	"sync"

	"github.com/deployer-dev/deployer/internal/stacks"
)

// OutcomeReads bounds the state reads of one stacks page running at once.
const OutcomeReads = 8

// envOutcome is the newest deployment's status of one environment of a
// stack; Detail says why it is unknown.
type envOutcome struct {
	Env, Status, Detail string
}

// outcomes reads the state of every environment of every stack of set
// (State, OutcomeReads at a time, within ctx) for the newest deployment's
// status: the colour of the graph's nodes. Without State it reads nothing.
func (s *Server) outcomes(ctx context.Context, set *stacks.Set) map[string][]envOutcome {
	out := map[string][]envOutcome{}
	if s.cfg.State == nil {
		return out
	}
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, OutcomeReads)
	)
	for _, st := range set.Stacks {
		envs := sortedKeys(st.Config.Environments)
		row := make([]envOutcome, len(envs)) // each read fills its own element
		out[st.Name] = row
		for i, env := range envs {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				o := envOutcome{Env: env}
				res, err := s.cfg.State(ctx, st.Name, env, 0)
				switch {
				case err != nil:
					o.Detail = err.Error()
				case len(res.State.DeploymentHistory) > 0:
					o.Status = string(res.State.DeploymentHistory[0].Status) // newest first
				}
				row[i] = o
			})
		}
	}
	wg.Wait()
	return out
}
