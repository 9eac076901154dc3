package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts read the record with cjson only to compare lockId and
// expiresAt; they never re-encode it, so the stored bytes stay exactly what Go
// marshalled (a heartbeat rewrites the two numbers in place).

// acquireScript takes KEYS[1] (the record) if it is absent or expired at the
// newcomer's lockedAt, fencing it by INCR on KEYS[2], all in one round trip.
//
//	ARGV[1] record JSON up to the fence value, ARGV[2] the JSON after it,
//	ARGV[3] the newcomer's lockedAt (epoch seconds), ARGV[4] the key's PX (ms),
//	ARGV[5] lockmgr.MaxRecordBytes.
//
// Reply {1, fence} when taken, {0, holder JSON} when held by a live record,
// {2, stored value} when the stored value is not a lock record, {3, its
// length} when the stored value is longer than ARGV[5] (never sent back).
var acquireScript = goredis.NewScript(`
local n = redis.call('STRLEN', KEYS[1])
if n > tonumber(ARGV[5]) then return {3, n} end
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, r = pcall(cjson.decode, cur)
  if not ok or type(r) ~= 'table' or type(r.expiresAt) ~= 'number' then
    return {2, cur}
  end
  if r.expiresAt >= tonumber(ARGV[3]) then
    return {0, cur}
  end
end
local f = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. string.format('%d', f) .. ARGV[2], 'PX', ARGV[4])
return {1, f}
`)

// heartbeatScript sets lastHeartbeat (ARGV[2]) and expiresAt (ARGV[3]) of
// KEYS[1] iff its lockId is ARGV[1], with a new PX (ARGV[4], ms). Reply 1 when
// done, 0 when the record is gone, another lockId holds it or the value is
// longer than ARGV[5] (lockmgr.MaxRecordBytes: not one deployer wrote).
var heartbeatScript = goredis.NewScript(`
if redis.call('STRLEN', KEYS[1]) > tonumber(ARGV[5]) then return 0 end
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local ok, r = pcall(cjson.decode, cur)
if not ok or type(r) ~= 'table' or r.lockId ~= ARGV[1] then return 0 end
local v = string.gsub(cur, '"expiresAt":%-?%d+', '"expiresAt":' .. ARGV[3], 1)
v = string.gsub(v, '"lastHeartbeat":%-?%d+', '"lastHeartbeat":' .. ARGV[2], 1)
redis.call('SET', KEYS[1], v, 'PX', ARGV[4])
return 1
`)

// releaseScript deletes KEYS[1] iff its lockId is ARGV[1] (a
// compare-and-delete) and leaves a receipt: KEYS[2] = ARGV[2] (the release
// call's id) for ARGV[3] ms. Reply 1 when deleted, or when the receipt is
// this call's own (a retry after its reply was lost); 0 otherwise. A
// release is announced on the channel ARGV[4] with the key ARGV[5]
// (waiters wake at once: docs/locking.md, "Wait queue"). A value longer
// than ARGV[6] (lockmgr.MaxRecordBytes) is not ours.
var releaseScript = goredis.NewScript(`
local cur = false
if redis.call('STRLEN', KEYS[1]) <= tonumber(ARGV[6]) then cur = redis.call('GET', KEYS[1]) end
local ours = false
if cur then
  local ok, r = pcall(cjson.decode, cur)
  ours = ok and type(r) == 'table' and r.lockId == ARGV[1]
end
if not ours then
  if redis.call('GET', KEYS[2]) == ARGV[2] then return 1 end
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`)

// getScript reads KEYS[1] unless it is longer than ARGV[1]
// (lockmgr.MaxRecordBytes). Reply {0} when absent, {1, value}, or {2, its
// length} when too long (the value is not sent).
var getScript = goredis.NewScript(`
local n = redis.call('STRLEN', KEYS[1])
if n > tonumber(ARGV[1]) then return {2, n} end
local v = redis.call('GET', KEYS[1])
if not v then return {0} end
return {1, v}
`)
