// Package dynamodb is the dynamodb://TABLE?region=R lock backend: one item
// per lock key, attribute for attribute the lock record of docs/locking.md
// (lockKey hash key, lockId, lockedBy, lockedAt, expiresAt, lastHeartbeat,
// metadata map, fence).
//
// The item outlives its holders and carries the key's fence. TryAcquire is one
// UpdateItem that sets the holder's attributes and adds 1 to fence,
// conditional on `attribute_not_exists(lockId) OR expiresAt < :now`; Heartbeat
// (UpdateItem) is conditional on lockId; Release is an UpdateItem conditional
// on lockId that removes the holder's attributes and keeps lockKey and fence,
// so a released item has no expiresAt and DynamoDB's TTL never deletes it. An
// item without lockId is not a lock: Get and List leave it out. Every read is
// strongly consistent; no transactions are used, so dynalite works.
package dynamodb
