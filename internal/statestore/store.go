package statestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Head identifies the stored revision a write is based on: the backend's
// Version of state.json and the serial and lineage recorded in it. The zero
// Head means "no state yet": a Save based on it is the first write.
type Head struct {
	Version Version
	Serial  int64
	Lineage string
}

// IsZero reports whether h is the head of a state that does not exist yet.
func (h Head) IsZero() bool { return h == Head{} }

// Store reads and writes the state documents of one Backend, enforcing the
// rules of docs/state-format.md in one place: checksums are verified on every read, every
// write keeps the lineage and raises the serial, and a write is a
// compare-and-swap on the head it was based on, never retried.
type Store struct {
	b      Backend
	now    func() time.Time
	max    int64
	sealer Sealer // nil: secrets are stored as they come
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock that times history snapshots (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithMaxDocumentBytes sets the largest state document, in bytes, that the
// Store loads or saves (0 or less: DefaultMaxDocumentBytes).
func WithMaxDocumentBytes(n int64) Option {
	return func(s *Store) {
		if n > 0 {
			s.max = n
		}
	}
}

// New returns a Store over b.
func New(b Backend, opts ...Option) *Store {
	s := &Store{b: b, now: time.Now, max: DefaultMaxDocumentBytes}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Backend returns the backend the Store writes to.
func (s *Store) Backend() Backend { return s.b }

// Location describes where the state of stack/env lives, for messages
// (".deployer/stacks/s/e/state.json", "s3://b/stacks/s/e/state.json").
func (s *Store) Location(stack, env string) string { return s.b.Location(stack, env) }

// NewState returns the state of a stack/environment that has none yet: a
// fresh lineage (UUID), serial 0, empty resources, outputs and history.
// Saving it (with Serial raised to 1 or more) on the zero Head creates it.
func NewState(stack, env string) *State {
	return &State{
		Version:           DocVersion,
		FormatVersion:     FormatVersion,
		Lineage:           uuid.NewString(),
		Metadata:          Metadata{Stack: stack, Environment: env},
		Resources:         map[string]*Resource{},
		Outputs:           map[string]any{},
		DeploymentHistory: []Deployment{},
	}
}

// Load reads and verifies the state of stack/env. It returns the state and
// the Head to base the next Save on; ErrNotFound (wrapped) when there is no
// state yet; *ChecksumError when the document fails verification (tampered,
// truncated, unparsable) or belongs to another stack/environment.
func (s *Store) Load(ctx context.Context, stack, env string) (*State, Head, error) {
	doc, err := s.ReadDoc(ctx, stack, env)
	if err != nil {
		return nil, Head{}, err
	}
	return s.Verify(ctx, stack, env, doc)
}

// Doc is a state document as its backend returned it, not yet verified:
// what one read of state.json gives a use case that checks its secrets
// block (CheckSecretsOf) before it verifies it (Verify), so that it reads
// the state once.
type Doc struct {
	Data    []byte
	Version Version
}

// ReadDoc reads state.json of stack/env as it is stored, within the
// Store's size bound, without verifying it. Errors: ErrNotFound (wrapped)
// when there is no state yet; the backend's (*TooLargeError over the bound).
func (s *Store) ReadDoc(ctx context.Context, stack, env string) (Doc, error) {
	data, ver, err := s.b.Read(WithReadLimit(ctx, s.max), stack, env)
	if err != nil {
		return Doc{}, err
	}
	return Doc{Data: data, Version: ver}, nil
}

// Verify is Load of a document already read (ReadDoc): its size bound,
// checksums, stack and environment checked and its secret values opened.
func (s *Store) Verify(ctx context.Context, stack, env string, doc Doc) (*State, Head, error) {
	data, ver := doc.Data, doc.Version
	loc := s.b.Location(stack, env)
	if err := s.checkSize(loc, int64(len(data))); err != nil {
		return nil, Head{}, err
	}
	st, err := Decode(data, loc)
	if err != nil {
		return nil, Head{}, ofState(err, stack, env)
	}
	if st.Metadata.Stack != stack || st.Metadata.Environment != env {
		return nil, Head{}, ofState(corrupt(loc, data, fmt.Sprintf("the document is the state of %s/%s, not %s/%s",
			st.Metadata.Stack, st.Metadata.Environment, stack, env)), stack, env)
	}
	if err := s.open(ctx, st); err != nil {
		return nil, Head{}, fmt.Errorf("open the secrets of %s: %w", loc, err)
	}
	return st, Head{Version: ver, Serial: st.Serial, Lineage: st.Lineage}, nil
}

// VersionReader is a Backend that reads the Version of state.json more
// cheaply than Read (docs/design.md#read-once-plan-once): the file backend
// hashes the file without decoding or verifying it.
type VersionReader interface {
	ReadVersion(ctx context.Context, stack, env string) (Version, error)
}

// ReadVersion returns the Version of the state of stack/env as stored now,
// "" when there is none: the backend's VersionReader when it has one, else
// the Version of a Read. A deploy compares it, under its lease, with the
// Version of the state it planned against and plans again only when they
// differ; Save's compare-and-swap on that Version stays the guard.
func (s *Store) ReadVersion(ctx context.Context, stack, env string) (Version, error) {
	var (
		ver Version
		err error
	)
	if vr, ok := s.b.(VersionReader); ok {
		ver, err = vr.ReadVersion(ctx, stack, env)
	} else {
		var doc Doc
		doc, err = s.ReadDoc(ctx, stack, env)
		ver = doc.Version
	}
	if isNotFound(err) {
		return "", nil
	}
	return ver, err
}

// Save writes st as the state of st.Metadata.Stack/Environment, with a
// history snapshot, by compare-and-swap on base (the Head its data was
// loaded with; the zero Head for the first write). The rules (docs/state-format.md#serial-lineage-and-compare-and-swap):
// st.Lineage must be set, and equal base.Lineage unless base is zero;
// st.Serial must be greater than base.Serial. Breaking them, or losing the
// compare-and-swap because someone else wrote since base was read, gives
// *ConflictError; Save never retries. lock is passed to backends that check
// the lease atomically with the write (an error wrapping ErrLeaseLost). Save
// sets st.Checksums (and st.Secrets: with a Sealer, secret values are written
// sealed and the checksums cover the sealed form). It returns the Head of
// the written state.
func (s *Store) Save(ctx context.Context, st *State, base Head, lock *LockRef) (Head, error) {
	if st == nil {
		return Head{}, errors.New("save state: nil state")
	}
	stack, env := st.Metadata.Stack, st.Metadata.Environment
	if stack == "" || env == "" {
		return Head{}, errors.New("save state: metadata.stack and metadata.environment must be set (use NewState)")
	}
	loc := s.b.Location(stack, env)
	if st.Lineage == "" {
		return Head{}, fmt.Errorf("save state %s: the state has no lineage (create it with NewState)", loc)
	}
	if base.Lineage != "" && st.Lineage != base.Lineage {
		return Head{}, &ConflictError{Location: loc, Reason: fmt.Sprintf(
			"the state being written has lineage %s but the stored state has lineage %s: it is a different state, not a newer version of it",
			st.Lineage, base.Lineage)}
	}
	if st.Serial <= base.Serial {
		return Head{}, &ConflictError{Location: loc, Reason: fmt.Sprintf(
			"the state being written has serial %d, not greater than the stored serial %d: every write must raise the serial",
			st.Serial, base.Serial)}
	}
	if err := ctx.Err(); err != nil {
		return Head{}, fmt.Errorf("save state %s: %w", loc, err)
	}
	doc, err := s.Encode(ctx, st)
	if err != nil {
		return Head{}, fmt.Errorf("save state %s: %w", loc, err)
	}
	// A document this Store could not load again is not written.
	if err := s.checkSize(loc, int64(len(doc))); err != nil {
		return Head{}, fmt.Errorf("save state: %w", err)
	}
	ver, err := s.b.Write(WithReadLimit(ctx, s.max), WriteRequest{
		Stack: stack, Env: env,
		Serial: st.Serial, Lineage: st.Lineage,
		Time:         s.now().UTC(),
		Document:     doc,
		Prev:         base.Version,
		DeploymentID: st.Metadata.DeploymentID,
		Lock:         lock,
	})
	if err != nil {
		var conflict *ConflictError
		if errors.As(err, &conflict) {
			return Head{}, err
		}
		return Head{}, fmt.Errorf("save state %s serial %d: %w", loc, st.Serial, err)
	}
	return Head{Version: ver, Serial: st.Serial, Lineage: st.Lineage}, nil
}

// ofState names stack/env in err when it is a *ChecksumError.
func ofState(err error, stack, env string) error {
	var ce *ChecksumError
	if errors.As(err, &ce) {
		ce.Stack, ce.Env = stack, env
	}
	return err
}
