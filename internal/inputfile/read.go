package inputfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits for the files deployer reads, in bytes (docs/configuration.md,
// "Limits on input"). State documents have their own, configurable limit in
// internal/statestore.
const (
	MaxConfigBytes  int64 = 4 << 20  // deployer.yaml
	MaxPlanBytes    int64 = 64 << 20 // a plan saved by plan --out
	MaxOutputsBytes int64 = 16 << 20 // a Command component's $DEPLOYER_OUTPUTS file
	// MaxReferencedBytes bounds one file named by ${file:PATH} in
	// deployer.yaml (a certificate, a key), MaxReferencedTotal all of them
	// together in one load.
	MaxReferencedBytes int64 = 1 << 20
	MaxReferencedTotal int64 = 16 << 20
)

// TooLargeError: the file is bigger than the limit for its kind.
type TooLargeError struct {
	Path  string
	What  string // "configuration file", "plan file", ...
	Size  int64  // bytes; at least Limit+1 when the file grew while read
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the %s is %s, over the limit of %s (check that the path names the right file)",
		e.Path, e.What, Size(e.Size), Size(e.Limit))
}

// NotRegularError: the path names a device, a FIFO, a socket or a directory.
type NotRegularError struct {
	Path string
	What string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	kind := "not a regular file"
	switch {
	case e.Mode.IsDir():
		kind = "a directory"
	case e.Mode&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case e.Mode&os.ModeSocket != 0:
		kind = "a socket"
	case e.Mode&os.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Sprintf("%s is %s, not a %s: pass the path of a regular file", e.Path, kind, e.What)
}

// Read returns the contents of the regular file at path, refusing, before
// reading, a path that is not a regular file (*NotRegularError) and a file of
// more than limit bytes (*TooLargeError, also when the file grows past the
// limit while it is read). what names the kind of file in messages
// ("configuration file"). Other errors are the os errors, wrapped.
func Read(path, what string, limit int64) ([]byte, error) {
	// Stat before opening: opening a FIFO blocks until a writer appears.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, what, limit, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The path may have been replaced between Stat and Open.
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(path, what, limit, fi); err != nil {
		return nil, err
	}
	data, over, err := ReadAtMost(f, limit)
	if err != nil {
		return nil, err
	}
	if over {
		return nil, &TooLargeError{Path: path, What: what, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// ReadAtMost reads r to its end, but never more than limit+1 bytes: over
// reports a reader that had more than limit bytes (data then holds the first
// limit+1 of them, so len(data) is a lower bound of the size). It is the one
// bounded read every reader of external input goes through (files, objects,
// rows, child processes' output): the caller turns over into its own error.
func ReadAtMost(r io.Reader, limit int64) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	return data, int64(len(data)) > limit, nil
}

func check(path, what string, limit int64, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, What: what, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return &TooLargeError{Path: path, What: what, Size: fi.Size(), Limit: limit}
	}
	return nil
}

// IsLimit reports whether err is a *TooLargeError or a *NotRegularError.
func IsLimit(err error) bool {
	var tl *TooLargeError
	var nr *NotRegularError
	return errors.As(err, &tl) || errors.As(err, &nr)
}

// Size renders a byte count the way the limits are written: "4 MiB",
// "100.0 MiB", "512 B".
func Size(n int64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
	)
	unit := func(n int64, u int64, name string) string {
		if n%u == 0 {
			return fmt.Sprintf("%d %s", n/u, name)
		}
		return fmt.Sprintf("%.1f %s", float64(n)/float64(u), name)
	}
	switch {
	case n >= gib:
		return unit(n, gib, "GiB")
	case n >= mib:
		return unit(n, mib, "MiB")
	case n >= kib:
		return unit(n, kib, "KiB")
	}
	return fmt.Sprintf("%d B", n)
}
