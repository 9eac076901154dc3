// Package redis is the redis:// and rediss:// lock backend
// (docs/self-hosted.md#redis-locks): lock records as JSON values in Redis, taken and extended by Lua
// scripts that compare lockId, with a per-key INCR fence counter that survives
// release, listed by SCAN (never KEYS). It talks to Redis through go-redis's
// UniversalClient, so a single server, a Sentinel group or a Cluster all work.
//
// Expiry is the caller's: a record is free when its expiresAt is before the
// newcomer's lockedAt (lockmgr.Backend). Redis's own key TTL is only garbage
// collection of abandoned records and is set well past expiresAt.
package redis
