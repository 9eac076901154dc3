package statestore

import (
	"context"
	"fmt"
	"io"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// DefaultMaxDocumentBytes is the largest state document a Store loads or
// saves unless configured otherwise (backend.max_state_size): four times the
// ~17 MB document of 10,000 resources, so that a hostile or broken document
// cannot exhaust memory while it is decoded (docs/configuration.md, "Limits
// on input").
const DefaultMaxDocumentBytes int64 = 64 << 20

// TooLargeError: a state document is bigger than the Store's limit. Nothing
// was decoded or written.
type TooLargeError struct {
	Location string
	Size     int64 // bytes
	Limit    int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("state %s is %s, over the limit of %s for a state document (if the state really is this large, raise backend.max_state_size in deployer.yaml or DEPLOYER_MAX_STATE_SIZE)",
		e.Location, inputfile.Size(e.Size), inputfile.Size(e.Limit))
}

// MaxDocumentBytes is the Store's limit on a state document, in bytes.
func (s *Store) MaxDocumentBytes() int64 { return s.max }

type readLimitKey struct{}

// WithReadLimit returns ctx carrying n, the largest document, in bytes, a
// backend's Read or ReadSnapshot may return. The Store sets it to its own
// limit on every read.
func WithReadLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, readLimitKey{}, n)
}

// ReadLimit returns the read limit ctx carries, in bytes (DefaultMaxDocumentBytes
// when none). A backend checks the size the storage reports (the file's
// size, Content-Length, length(document)) against it before reading, reads
// through LimitedRead, and returns *TooLargeError when the document is
// larger: a hostile or broken document is never read whole into memory.
func ReadLimit(ctx context.Context) int64 {
	if n, ok := ctx.Value(readLimitKey{}).(int64); ok && n > 0 {
		return n
	}
	return DefaultMaxDocumentBytes
}

// LimitedRead reads r to its end, at most ReadLimit(ctx) bytes: a longer
// document is a *TooLargeError naming loc (its Size at least limit+1).
func LimitedRead(ctx context.Context, r io.Reader, loc string) ([]byte, error) {
	n := ReadLimit(ctx)
	data, over, err := inputfile.ReadAtMost(r, n)
	if err != nil {
		return nil, err
	}
	if over {
		return nil, &TooLargeError{Location: loc, Size: int64(len(data)), Limit: n}
	}
	return data, nil
}

// CheckReadSize returns a *TooLargeError naming loc when size, as the
// storage reports it, is over ReadLimit(ctx).
func CheckReadSize(ctx context.Context, loc string, size int64) error {
	if n := ReadLimit(ctx); size > n {
		return &TooLargeError{Location: loc, Size: size, Limit: n}
	}
	return nil
}

func (s *Store) checkSize(loc string, n int64) error {
	if n > s.max {
		return &TooLargeError{Location: loc, Size: n, Limit: s.max}
	}
	return nil
}

// ReadFile reads and verifies a state document from a local file (a state
// saved by a failed deploy, for `state push`): the path must be a regular
// file of at most limit bytes (0 or less: DefaultMaxDocumentBytes), checked
// before it is read. Errors: *inputfile.NotRegularError,
// *inputfile.TooLargeError, *ChecksumError, or the os error wrapped.
func ReadFile(path string, limit int64) (*State, error) {
	if limit <= 0 {
		limit = DefaultMaxDocumentBytes
	}
	data, err := inputfile.Read(path, "state file", limit)
	if err != nil {
		if inputfile.IsLimit(err) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return Decode(data, path)
}
