// Package dynamodb is the dynamodb://TABLE?region=R lock backend (seed 000,
// seed 002, issue 3): one item per lock key, attribute for attribute seed
// 000's (lockKey hash key, lockId, lockedBy, lockedAt, expiresAt as the TTL
// attribute, lastHeartbeat, metadata map) plus fence.
//
// TryAcquire draws the fence from a counter item ("fence#"+key, UpdateItem ADD)
// and then makes one PutItem conditional on
// `attribute_not_exists(lockKey) OR expiresAt < :now`; Heartbeat (UpdateItem)
// and Release (DeleteItem) are conditional on lockId. Every read is strongly
// consistent. No transactions are used, so dynalite works.
package dynamodb
