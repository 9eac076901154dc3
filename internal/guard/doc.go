// Package guard is the use case behind `deployer guard`: stop a resource that
// several applications share (a database) only when every other application
// that shares it is down, and never twice at once (docs/guard.md).
//
// The rules come from the shared-database stop design deployer keeps: a
// resource with no other sharer is stopped at once, without a lock; otherwise
// the resource's lock is taken through lockmgr.Manager (a few retries with
// backoff and jitter, then fail safe: skip the stop), each other sharer's
// status URL is checked with an HTTP HEAD (200 = UP, any other code = DOWN,
// an error or timeout = UNKNOWN, which counts as UP), and the stop runs only
// when all are DOWN. After a stop the lock is kept until its TTL runs out, so
// a second guard racing for the same resource skips instead of stopping it
// again; otherwise it is released, owner-checked.
package guard
