// Package s3 is the s3://BUCKET[/prefix] lock backend (docs/aws.md#s3-lock-design): lock records
// as JSON objects, kept correct by S3 conditional writes alone, as Terraform
// 1.11's S3 locking is. No DynamoDB, no conditional DELETE.
//
// Design (also in docs/aws.md):
//
//   - The record of key K lives at {prefix}/locks/{PathEscape(K)}.json with the
//     attribute names of docs/design.md#lock-record (lockKey, lockId, lockedBy, lockedAt,
//     expiresAt, lastHeartbeat, metadata, fence) plus "released".
//   - Create: PUT If-None-Match: * (fence 1).
//   - Take over a released or expired record: PUT If-Match: <etag read>, with
//     fence = old fence + 1. The fence lives in the object, so it grows across
//     release and expiry.
//   - Heartbeat: read, check lockId, PUT If-Match: <etag read>.
//   - Release: read, check lockId, PUT If-Match: <etag read> of a tombstone
//     (released=true, expiresAt=0, lockId and fence kept). A tombstone counts
//     as free; Get and List do not show it.
//   - The object is never deleted by deployer. Servers such as MinIO ignore
//     If-Match on DELETE, so a delete could remove a newer holder's record;
//     a PUT-only protocol cannot. Every write is conditional on the exact
//     version read, so a stale holder (paused past its TTL, then taken over)
//     gets 412 on heartbeat and release and ErrLockLost, and can never extend
//     or remove the newer holder's record.
//
// A backend caches the ETag of the objects it last wrote, so an uncontended
// acquire + release is two conditional PUTs, like the raw put + delete.
// Before its first write per process and bucket (or when opened for a
// command that writes) it refuses a server that ignores If-None-Match or
// If-Match (CheckWrites, awsbackend.EnsureConditionalWrites); reads never
// write, so a read-only role can list locks.
package s3
