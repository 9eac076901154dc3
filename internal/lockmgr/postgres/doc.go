// Package postgres is the postgres:// lock backend (docs/self-hosted.md#postgresql-locks-and-state): one row
// per key in deployer_locks, taken by a single INSERT ... ON CONFLICT DO UPDATE
// WHERE the old row has expired, fenced by the deployer_lock_fence sequence
// (drawn under the row lock on every takeover), heartbeated by a statement
// conditional on lock_id and released by one that leaves a tombstone row
// (empty lock_id), so fences grow strictly per key (docs/locking.md). It holds no
// session state (no advisory locks, no long transactions), so it works through
// PgBouncer in transaction mode. The schema is internal/pgschema's and is
// checked on first use.
package postgres
