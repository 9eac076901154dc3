package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Move is one component's state entry moved from one address to another
// (docs/operations.md#moves): a moved: entry of deployer.yaml that applies
// to the state, or `deployer state mv`. A move of a whole service is one
// Move per component of it in the state.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MoveError: a move's destination is already in the state, so moving
// there would overwrite another component's entry.
type MoveError struct {
	From, To string
}

func (e *MoveError) Error() string {
	return fmt.Sprintf("cannot move %s to %s: %s is already in the state (deployer state list shows it; "+
		"remove it from the state or pick another name)", e.From, e.To, e.To)
}

// ApplyMoves applies moves in order to the resources of st and returns a
// copy of st holding the result with the component moves that applied, in
// order. A move whose From is not in the state is skipped (already applied,
// or never deployed). Each moved entry keeps everything (outputs, engine
// record, lifecycle, status); every entry's dependencies and recorded
// inputs that name a moved address name its new one. A destination already
// in the state is a *MoveError. st itself is never changed; with no move
// applying it is returned as it is.
func ApplyMoves(st *statestore.State, moves []config.Move) (*statestore.State, []Move, error) {
	if st == nil || len(moves) == 0 {
		return st, nil, nil
	}
	res := maps.Clone(st.Resources)
	var applied []Move
	for _, m := range moves {
		for _, mv := range expand(res, m) {
			if _, taken := res[mv.To]; taken {
				return nil, nil, &MoveError{From: mv.From, To: mv.To}
			}
			res[mv.To] = res[mv.From]
			delete(res, mv.From)
			applied = append(applied, mv)
		}
	}
	if len(applied) == 0 {
		return st, nil, nil
	}
	renamed := map[string]string{}
	for _, mv := range applied {
		for from, to := range renamed {
			if to == mv.From { // a chain: a -> b, then b -> c
				renamed[from] = mv.To
			}
		}
		renamed[mv.From] = mv.To
	}
	for addr, r := range res {
		res[addr] = follow(r, renamed)
	}
	out := *st
	out.Resources = res
	return &out, applied, nil
}

// expand is the component moves of m over the addresses of res: m itself
// when it moves a component in res, one per component of a moved service.
func expand(res map[string]*statestore.Resource, m config.Move) []Move {
	if !m.IsService() {
		if _, ok := res[m.From]; ok {
			return []Move{{From: m.From, To: m.To}}
		}
		return nil
	}
	var out []Move
	for _, addr := range slices.Sorted(maps.Keys(res)) {
		if rest, ok := strings.CutPrefix(addr, m.From+"/"); ok {
			out = append(out, Move{From: addr, To: m.To + "/" + rest})
		}
	}
	return out
}

// follow returns r with its dependencies and recorded inputs renamed; r
// itself when it names no renamed address.
func follow(r *statestore.Resource, renamed map[string]string) *statestore.Resource {
	names := slices.ContainsFunc(r.Dependencies, func(d string) bool { _, ok := renamed[d]; return ok })
	if r.Inputs != nil {
		for d := range r.Inputs.Dependencies {
			if _, ok := renamed[d]; ok {
				names = true
			}
		}
	}
	if !names {
		return r
	}
	cp := *r
	cp.Dependencies = make([]string, len(r.Dependencies))
	for i, d := range r.Dependencies {
		cp.Dependencies[i] = cmp.Or(renamed[d], d)
	}
	if r.Inputs != nil {
		in := &statestore.ResolvedInputs{Dependencies: make(map[string]map[string]any, len(r.Inputs.Dependencies))}
		for d, o := range r.Inputs.Dependencies {
			in.Dependencies[cmp.Or(renamed[d], d)] = o
		}
		cp.Inputs = in
	}
	return &cp
}

// movedSources maps each move's destination to its source.
func movedSources(moves []Move) map[string]string {
	out := make(map[string]string, len(moves))
	for _, m := range moves {
		out[m.To] = m.From
	}
	return out
}
