// Package file is the file://DIR state backend (docs/state-format.md, docs/backends.md#filedir): state
// documents of one machine, safe between goroutines and between processes
// that share DIR.
//
// Layout under DIR (docs/design.md#state-layout, the same as under an S3 bucket):
//
//	stacks/{stack}/{env}/state.json                 the current state document
//	stacks/{stack}/{env}/history/{time}-{serial}.json  one immutable snapshot per write
//	stacks/{stack}/{env}/.state.flock               OS file lock (gofrs/flock) held by every write
//
// A Version is "sha256:<hex>" of the bytes of state.json. A write takes the
// OS file lock, reads state.json and compares its Version with the one the
// writer loaded (compare-and-swap; a missing file is ""), writes the
// snapshot with O_EXCL (a snapshot is never overwritten), then replaces
// state.json atomically: a temporary file in the same directory is written
// and fsynced, renamed over state.json, and the directory is fsynced. A
// writer that lost the compare-and-swap writes nothing, not even a
// snapshot. Reads take no lock: the rename is atomic, so a reader sees a
// whole document.
package file
