// Package file is the file://DIR lock backend (docs/locking.md, docs/backends.md#filedir): lock records
// of one machine, safe between goroutines and between processes that share
// DIR.
//
// Layout under DIR/locks/:
//
//	{enc(key)}.json   the record of docs/design.md#lock-record (lockmgr.Record's JSON), present while held
//	{enc(key)}.fence  the last fence handed out for the key (decimal), kept forever
//	.flock            OS file lock (gofrs/flock) held by every read-then-write
//
// enc(key) percent-encodes every byte outside [a-z0-9_-] as %XX (upper-case
// hex), so "stack:shop:env:prod:component:api/web" is stored as
// "stack%3Ashop%3Aenv%3Aprod%3Acomponent%3Aapi%2Fweb.json": no ':' or '/' in
// file names, no clashes on case-insensitive file systems, and the key is
// recovered with url.PathUnescape. An encoding longer than 200 bytes is
// replaced by "~" + hex(sha256(key)); those records are found by the lockKey
// inside them.
//
// Writes are atomic: a temporary file in the same directory is written and
// fsynced, renamed over the target, and the directory is fsynced. Reads
// (Get, List) take no lock: a rename is atomic, so they see a whole record.
package file
