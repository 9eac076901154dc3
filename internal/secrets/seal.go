package secrets

import (
	"context"
	"crypto/cipher"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Seal implements statestore.Sealer. Secret values (docs/secrets.md: values
// under keys named like password/secret/token/key, values written {secret:
// true, value: X}, and strings holding a value the Masker knows, such as a
// connection string a component built from a password) become envelopes; envelopes already there are kept as
// they are. The key is the one of st.Secrets, or a new one when st has no
// secrets block. Resources without plain secrets are shared with st.
func (s *Sealer) Seal(ctx context.Context, st *statestore.State) (*statestore.State, error) {
	known := s.masker.Len()
	out, err := s.sealOnce(ctx, st)
	if err != nil || s.masker.Len() == known {
		return out, err
	}
	// Secrets first met in this pass may sit inside strings the pass saw
	// before them: one more pass seals those.
	return s.sealOnce(ctx, out)
}

// sealPass is one pass of Seal: the data key of the state (info, nil
// until a first secret needs a fresh one) and its cipher, opened on the
// first secret sealed.
type sealPass struct {
	s    *Sealer
	ctx  context.Context
	info *statestore.SecretsInfo
	a    cipher.AEAD
}

// seal returns the envelope of v found at place, teaching the Masker its
// strings; an equal value at the same place under the same key gets the
// envelope it got before (the Sealer's cache).
func (p *sealPass) seal(place string, v any) (map[string]any, error) {
	s := p.s
	if p.a == nil {
		var err error
		if p.info == nil {
			p.info, p.a, err = s.freshKey(p.ctx)
		} else {
			p.a, err = s.aead(p.ctx, *p.info)
		}
		if err != nil {
			return nil, err
		}
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return nil, s.fail(fmt.Errorf("encode a secret value: %w", err))
	}
	if str, ok := v.(string); ok {
		s.masker.Add(str)
	} else {
		s.masker.Add(Strings(v)...)
	}
	ck := blockID(*p.info) + "\x00" + place + "\x00" + string(plain)
	s.mu.Lock()
	env, ok := s.cache[ck]
	s.mu.Unlock()
	if ok {
		return env, nil
	}
	ct, err := sealBytes(p.a, p.info.Key, plain)
	if err != nil {
		return nil, s.fail(err)
	}
	env = map[string]any{sensitive.EnvelopeMarker: sensitive.EnvelopeVersion, "provider": p.info.Provider, "key": p.info.Key, "ciphertext": ct}
	s.mu.Lock()
	s.cache[ck] = env
	s.mu.Unlock()
	return env, nil
}

// sealOnce is one pass of Seal over the resources and the stack outputs
// of st, copying only what changes.
func (s *Sealer) sealOnce(ctx context.Context, st *statestore.State) (*statestore.State, error) {
	pass := &sealPass{s: s, ctx: ctx, info: st.Secrets}
	seal := pass.seal
	var res map[string]*statestore.Resource
	for addr, r := range st.Resources {
		if r == nil {
			continue
		}
		c := *r
		changed := false
		for i, m := range []*map[string]any{&c.DesiredConfig, &c.ActualState, &c.Outputs} {
			sealed, ch, err := s.sealMap(resourcePlace(addr, i), *m, seal)
			if err != nil {
				return nil, err
			}
			*m, changed = sealed, changed || ch
		}
		in, ch, err := s.sealInputs(addr, r.Inputs, seal)
		if err != nil {
			return nil, err
		}
		if !changed && !ch {
			continue
		}
		if res == nil {
			res = make(map[string]*statestore.Resource, len(st.Resources))
			for a, r := range st.Resources {
				res[a] = r
			}
		}
		c.Inputs = in
		res[addr] = &c
	}
	outs, changed, err := s.sealMap("outputs", st.Outputs, seal)
	if err != nil {
		return nil, err
	}
	if res == nil && !changed && (pass.info == st.Secrets) {
		return st, nil
	}
	cp := *st
	if res != nil {
		cp.Resources = res
	}
	cp.Outputs = outs
	cp.Secrets = pass.info
	return &cp, nil
}

// sealInputs seals the dependency outputs recorded as a resource's resolved
// inputs (their secret-keyed values are digests there; strings holding a
// secret are not), copying only what changes.
func (s *Sealer) sealInputs(owner string, in *statestore.ResolvedInputs, seal func(string, any) (map[string]any, error)) (*statestore.ResolvedInputs, bool, error) {
	if in == nil {
		return nil, false, nil
	}
	var deps map[string]map[string]any
	for addr, m := range in.Dependencies {
		nm, changed, err := s.sealMap(inputsPlace(owner, addr), m, seal)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if deps == nil {
				deps = maps.Clone(in.Dependencies)
			}
			deps[addr] = nm
		}
	}
	if deps == nil {
		return in, false, nil
	}
	return &statestore.ResolvedInputs{Dependencies: deps}, true, nil
}

// sealMap returns m with its secret values sealed, and whether it changed;
// an unchanged m is returned as it is, a changed one is a copy (m is never
// written).
func (s *Sealer) sealMap(place string, m map[string]any, seal func(string, any) (map[string]any, error)) (map[string]any, bool, error) {
	var out map[string]any
	for k, v := range m {
		var nv any
		changed := false
		switch {
		case v == nil || sensitive.IsEnvelope(v):
		case sensitive.IsSecretValue(v) || sensitive.IsSecretKey(k) || s.holdsSecret(v):
			env, err := seal(place+"\x00"+k, v)
			if err != nil {
				return nil, false, err
			}
			nv, changed = env, true
		default:
			var err error
			if nv, changed, err = s.sealValue(place+"\x00"+k, v, seal); err != nil {
				return nil, false, err
			}
		}
		if changed {
			if out == nil {
				out = make(map[string]any, len(m))
				for k2, v2 := range m {
					out[k2] = v2
				}
			}
			out[k] = nv
		}
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

// holdsSecret reports whether v is a string holding a value the Masker knows.
func (s *Sealer) holdsSecret(v any) bool {
	str, ok := v.(string)
	return ok && s.masker.Contains(str)
}

func (s *Sealer) sealValue(place string, v any, seal func(string, any) (map[string]any, error)) (any, bool, error) {
	if s.holdsSecret(v) {
		env, err := seal(place, v)
		return env, err == nil, err
	}
	switch t := v.(type) {
	case map[string]any:
		if sensitive.IsEnvelope(t) {
			return v, false, nil
		}
		if sensitive.IsSecretValue(t) {
			env, err := seal(place, t)
			return env, err == nil, err
		}
		return s.sealMap(place, t, seal)
	case []any:
		var out []any
		for i, x := range t {
			nv, changed, err := s.sealValue(place+"\x00"+strconv.Itoa(i), x, seal)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = append([]any(nil), t...)
				}
				out[i] = nv
			}
		}
		if out != nil {
			return out, true, nil
		}
	}
	return v, false, nil
}
