package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// MaxHistoryInState caps deployment_history inside state.json; every entry
// also lives on in the history snapshot of the serial it wrote.
const MaxHistoryInState = 100

// ChangeSet is what a run does to the state: the components' changes
// (executor.Changes) and the stack outputs.
type ChangeSet struct {
	executor.Changes
	// Outputs, with SetOutputs, are the stack outputs deployer.yaml names:
	// Apply records them from the resulting resources' outputs
	// (docs/operations.md#stack-outputs). Without SetOutputs the state's
	// outputs stay as they are (state rm, state mv).
	Outputs    map[string]config.OutputRef
	SetOutputs bool
	// DropOutputs are stack outputs to remove (a refresh-only removing
	// the component they come from), without SetOutputs.
	DropOutputs []string
}

// Apply writes cs and dep onto st (a copy is not needed: st is ours).
func (cs ChangeSet) Apply(st *statestore.State, dep statestore.Deployment, lease lockmgr.Record, by, commit, branch string, now time.Time) {
	if st.Resources == nil {
		st.Resources = map[string]*statestore.Resource{}
	}
	for addr, r := range cs.Resources {
		if r == nil {
			delete(st.Resources, addr)
		} else {
			st.Resources[addr] = r
		}
	}
	st.Serial++
	dep.Serial = st.Serial
	st.DeploymentHistory = append([]statestore.Deployment{dep}, st.DeploymentHistory...)
	if len(st.DeploymentHistory) > MaxHistoryInState {
		st.DeploymentHistory = st.DeploymentHistory[:MaxHistoryInState]
	}
	st.Metadata.LastUpdated, st.Metadata.LastUpdatedBy = now, by
	st.Metadata.DeploymentID, st.Metadata.GitCommit, st.Metadata.GitBranch = dep.DeploymentID, commit, branch
	st.Metadata.Fence = lease.Fence
	lockedAt, expiresAt := time.Unix(lease.LockedAt, 0).UTC(), time.Unix(lease.ExpiresAt, 0).UTC()
	st.Lock = statestore.LockInfo{Locked: true, LockID: &lease.LockID, LockedBy: &lease.LockedBy, LockedAt: &lockedAt, ExpiresAt: &expiresAt}
	if cs.SetOutputs {
		st.Outputs = plan.StackOutputs(cs.Outputs, func(addr string) (map[string]any, bool) {
			r := st.Resources[addr]
			if r == nil {
				return nil, false
			}
			return r.Outputs, true
		})
	}
	for _, name := range cs.DropOutputs {
		delete(st.Outputs, name)
	}
	if st.Outputs == nil {
		st.Outputs = map[string]any{}
	}
}

// Save writes the new state under the lease. A stack-level lease writes by
// compare-and-swap on the head it loaded: losing it means someone wrote
// without our lock, and the command stops (exit 4). A service- or
// component-level lease shares state.json with other holders of disjoint
// scopes, so it re-reads and re-applies its own resources on a lost CAS: no
// one else may change them while the lease is held (docs/locking.md). When
// the write fails the new state goes to ./deployer-errored-{stack}-{env}.json.
func (c *Core) Save(ctx context.Context, lease *lockmgr.Holding, t Target, st *statestore.State, head statestore.Head,
	cs ChangeSet, dep statestore.Deployment, commit, branch string) (statestore.Head, error) {
	rec, ref := lease.Record(), LeaseRef(lease)
	now := c.Now().UTC()
	scoped := t.Service != ""
	for attempt := 0; ; attempt++ {
		if lease.Lost() != nil {
			err := &statestore.ConflictError{Location: c.Store.Location(t.Stack, t.Env),
				Reason: "the lock was lost (broken with unlock --force or taken over after it expired) before the state was written"}
			return statestore.Head{}, c.saveErrored(ctx, t, st, head, cs, dep, rec, commit, branch, now, err)
		}
		next := CloneState(st)
		cs.Apply(next, dep, rec, rec.LockedBy, commit, branch, now)
		newHead, err := c.Store.Save(ctx, next, head, ref)
		if err == nil {
			c.Audit.Info("state.saved", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
				"lineage", newHead.Lineage, "deployment_id", dep.DeploymentID, "lock_id", rec.LockID)
			return newHead, nil
		}
		var conflict *statestore.ConflictError
		if scoped && errors.As(err, &conflict) && attempt < 20 {
			cur, curHead, lerr := c.Store.Load(ctx, t.Stack, t.Env)
			if lerr == nil && (head.Lineage == "" || curHead.Lineage == head.Lineage) {
				st, head = cur, curHead
				continue
			}
		}
		return statestore.Head{}, c.saveErrored(ctx, t, st, head, cs, dep, rec, commit, branch, now, err)
	}
}

// saveErrored keeps the state that could not be written (docs/design.md#state-writes).
// When its secrets cannot be sealed because the state has no key yet and
// none is available (no passphrase set, a component returned a secret),
// the file is sealed with a generated passphrase that is never printed: it
// goes to a file of mode 0600 beside it, deployer-errored-{stack}-{env}.passphrase,
// which the error names (docs/secrets.md#errored-states-under-ci).
func (c *Core) saveErrored(ctx context.Context, t Target, st *statestore.State, head statestore.Head, cs ChangeSet, dep statestore.Deployment,
	rec lockmgr.Record, commit, branch string, now time.Time, cause error) error {
	if len(cs.Resources) == 0 {
		return cause
	}
	next := CloneState(st)
	cs.Apply(next, dep, rec, rec.LockedBy, commit, branch, now)
	next.BasedOn = statestore.BaseDigest(st, head) // state push checks it (docs/state-format.md#errored-state-files)
	ctx = context.WithoutCancel(ctx)
	data, err := c.Store.Encode(ctx, next)
	generated := ""
	var se *statestore.SecretsError
	if err != nil && errors.As(err, &se) && st.Secrets == nil {
		generated, data, err = c.encodeWithGeneratedKey(ctx, next)
	}
	if err != nil {
		return errors.Join(cause, err)
	}
	base := erroredBase(c.Dir, t.Stack, t.Env)
	path := base + ".json"
	if err := writePrivate(path, data); err != nil {
		return errors.Join(cause, fmt.Errorf("also failed to save the new state to %s: %w", path, err))
	}
	es := &ErroredStateError{Err: cause, Path: path, Stack: t.Stack, Env: t.Env}
	if generated != "" { // never printed, on any CI or terminal (docs/secrets.md#errored-states-under-ci)
		es.PassphraseFile = base + ".passphrase"
		if err := writePrivate(es.PassphraseFile, []byte(generated)); err != nil {
			return errors.Join(cause, fmt.Errorf("also failed to save the generated passphrase of %s to %s: %w", path, es.PassphraseFile, err))
		}
	}
	return es
}

// encodeWithGeneratedKey seals st with the passphrase provider under a new
// random passphrase and returns the passphrase and the document.
func (c *Core) encodeWithGeneratedKey(ctx context.Context, st *statestore.State) (string, []byte, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, err
	}
	pass := base64.RawURLEncoding.EncodeToString(raw)
	p, err := secrets.NewProvider("passphrase", func(k string) string {
		if k == "DEPLOYER_SECRETS_PASSPHRASE" {
			return pass
		}
		return ""
	})
	if err != nil {
		return "", nil, err
	}
	st.Secrets = nil
	data, err := statestore.New(c.Store.Backend(), statestore.WithSealer(secrets.NewSealer(p, c.Masker))).Encode(ctx, st)
	return pass, data, err
}

// writePrivate writes data to path as a new file of mode 0600: written to a
// temporary file in the same directory, synced, then renamed over path, so
// a symlink or an existing file at path is replaced, never followed or
// kept with its mode.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ErroredStateError: infrastructure changed but the state write failed; the
// new state is in Path and `deployer state push` writes it (docs/design.md#state-writes).
type ErroredStateError struct {
	Err        error
	Path       string
	Stack, Env string
	// PassphraseFile, when set, holds the generated passphrase that seals
	// the secrets of Path (the state had no key and none was set): a file
	// of mode 0600 beside Path. The passphrase itself is never printed: a
	// log may be read by anyone who can read the run, and not every CI
	// says it is one (Jenkins, Azure Pipelines set no CI variable).
	PassphraseFile string
}

func (e *ErroredStateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\nthe infrastructure changed but the state could not be written", e.Err)
	push := fmt.Sprintf("deployer state push %s -s %s -e %s --yes", e.Path, e.Stack, e.Env)
	if e.PassphraseFile == "" {
		fmt.Fprintf(&b, "; the new state was saved to %s.\nCheck `deployer state show -s %s -e %s`, then write it with: %s", e.Path, e.Stack, e.Env, push)
		return b.String()
	}
	fmt.Fprintf(&b, ": it holds secret values and no secrets key is set. The new state was saved to %s, its secrets encrypted with ", e.Path)
	fmt.Fprintf(&b, "a generated passphrase that is never printed: it is in %s (mode 0600).\n"+
		"Keep both files (under CI, e.g. upload them as a short-lived artifact), then write the state with: DEPLOYER_SECRETS_PASSPHRASE_FILE=%s %s\n",
		e.PassphraseFile, e.PassphraseFile, push)
	b.WriteString("From then on that passphrase opens the state; keep it in your CI's secrets, or change it with deployer secrets rotate.")
	return b.String()
}
func (e *ErroredStateError) Unwrap() error { return e.Err }

// CloneState deep-copies st through JSON (resources are small maps; the
// hot path of a deploy touches it once).
func CloneState(st *statestore.State) *statestore.State {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // strings as the state writes them: engine data is kept byte for byte
	_ = enc.Encode(st)
	data := buf.Bytes()
	var out statestore.State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep numbers exactly as loaded
	_ = dec.Decode(&out)
	if out.Resources == nil {
		out.Resources = map[string]*statestore.Resource{}
	}
	return &out
}
