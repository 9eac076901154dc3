package lockmgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// MaxRecordBytes is the largest lock record (or wait-queue record) a backend
// reads, in bytes, as stored (docs/locking.md, "Record size"). A record
// deployer writes is a few hundred bytes: the Manager refuses to write one
// over the limit, and cuts a lock exec command line to MaxCommandBytes. A
// larger object at a lock key is debris or hostile, and is never read whole.
const MaxRecordBytes int64 = 64 << 10

// MaxCommandBytes bounds the command line a lock exec record keeps
// (Metadata.Command, cut with "…" past it): `state locks` shows it, and a
// long one must not push the record over MaxRecordBytes.
const MaxCommandBytes = 4 << 10

// RecordTooLargeError: what is stored at a lock key is bigger than
// MaxRecordBytes, so it was not read. The key counts as held (a record that
// cannot be read is never taken as free): a person must remove it.
type RecordTooLargeError struct {
	Key      string // the lock (or wait-queue) key
	Location string // where it is stored: a path, s3://BUCKET/KEY, a Redis key, a table row
	Size     int64  // bytes; at least Limit+1 when the size was not known before reading
	Limit    int64  // bytes
	// Remove is how to delete it by hand ("rm PATH", "aws s3 rm s3://..."):
	// unlock --force cannot, as it deletes only a lock id it has read.
	Remove string
}

func (e *RecordTooLargeError) Error() string {
	size := inputfile.Size(e.Size)
	if e.Size == e.Limit+1 {
		size = "more than " + inputfile.Size(e.Limit)
	}
	return fmt.Sprintf("lock %s: %s holds %s, over the limit of %s for a lock record, so it is not a record deployer wrote and was not read; the lock counts as held until it is removed: make sure no deploy is running, then remove it (%s)",
		e.Key, e.Location, size, inputfile.Size(e.Limit), e.Remove)
}

// TooLarge returns the *RecordTooLargeError of a record of size bytes
// (as the storage reports it) at key, stored at loc and removed by remove;
// nil when size is within MaxRecordBytes.
func TooLarge(key, loc, remove string, size int64) error {
	if size <= MaxRecordBytes {
		return nil
	}
	return &RecordTooLargeError{Key: key, Location: loc, Size: size, Limit: MaxRecordBytes, Remove: remove}
}

// ReadRecord reads the stored bytes of the record at key from r, at most
// MaxRecordBytes: a longer one is a *RecordTooLargeError (see TooLarge).
func ReadRecord(r io.Reader, key, loc, remove string) ([]byte, error) {
	data, over, err := inputfile.ReadAtMost(r, MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	if over {
		return nil, TooLarge(key, loc, remove, int64(len(data)))
	}
	return data, nil
}

// IsRecordTooLarge reports whether err is, or wraps, a *RecordTooLargeError.
func IsRecordTooLarge(err error) bool {
	var tl *RecordTooLargeError
	return errors.As(err, &tl)
}

// bounded returns md with its command line cut to MaxCommandBytes, on a
// rune boundary, ending in "…".
func (md Metadata) bounded() Metadata {
	if len(md.Command) <= MaxCommandBytes {
		return md
	}
	cut := MaxCommandBytes - len("…")
	for cut > 0 && md.Command[cut]&0xC0 == 0x80 {
		cut--
	}
	md.Command = md.Command[:cut] + "…"
	return md
}

// checkWritable refuses a record over MaxRecordBytes before it is written:
// every backend would refuse to read it back.
func checkWritable(rec Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode lock record %s: %w", rec.LockKey, err)
	}
	if n := int64(len(data)); n > MaxRecordBytes {
		return fmt.Errorf("lock %s: the record would be %s, over the limit of %s for a lock record (docs/locking.md, \"Record size\"): shorten what it carries (the holder's name, the CI variables)",
			rec.LockKey, inputfile.Size(n), inputfile.Size(MaxRecordBytes))
	}
	return nil
}
