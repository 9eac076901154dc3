package dynamodb

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Attribute names of the lock item (docs/design.md#lock-record).
const (
	attrKey       = "lockKey"
	attrID        = "lockId"
	attrBy        = "lockedBy"
	attrAt        = "lockedAt"
	attrExpires   = "expiresAt"
	attrHeartbeat = "lastHeartbeat"
	attrMetadata  = "metadata"
	attrFence     = "fence"
	// attrReleaseID marks a released item with the id of the Release call
	// that released it, so a retried release recognises its own work.
	attrReleaseID = "releaseId"
)

// acquireUpdate writes the holder's attributes and increments the fence of
// the key's item (created at fence 1 when absent). releaseUpdate removes the
// holder's attributes, keeps lockKey and fence, and sets releaseId.
const (
	acquireUpdate = "SET lockId = :id, lockedBy = :by, lockedAt = :at, expiresAt = :exp, lastHeartbeat = :hb, metadata = :md ADD fence :one REMOVE releaseId"
	releaseUpdate = "SET releaseId = :rid REMOVE lockId, lockedBy, lockedAt, expiresAt, lastHeartbeat, metadata"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func metadataToMap(m lockmgr.Metadata) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	put := func(k, v string) {
		if v != "" {
			out[k] = s(v)
		}
	}
	put("user", m.User)
	put("ci_system", m.CISystem)
	put("ci_run_id", m.CIRunID)
	put("deployment_id", m.DeploymentID)
	put("git_commit", m.GitCommit)
	put("git_branch", m.GitBranch)
	put("hostname", m.Hostname)
	put("operation", string(m.Operation))
	put("command", m.Command)
	if m.PID != 0 {
		out["pid"] = n(int64(m.PID))
	}
	return out
}

func fromItem(item map[string]types.AttributeValue) (lockmgr.Record, error) {
	var r lockmgr.Record
	var err error
	str := func(k string) string {
		if v, ok := item[k].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	num := func(k string) int64 {
		v, ok := item[k].(*types.AttributeValueMemberN)
		if !ok {
			return 0
		}
		x, perr := strconv.ParseInt(v.Value, 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("lock item %q: attribute %s=%q is not an integer", str(attrKey), k, v.Value)
		}
		return x
	}
	r.LockKey, r.LockID, r.LockedBy = str(attrKey), str(attrID), str(attrBy)
	r.LockedAt, r.ExpiresAt, r.LastHeartbeat, r.Fence = num(attrAt), num(attrExpires), num(attrHeartbeat), num(attrFence)
	if m, ok := item[attrMetadata].(*types.AttributeValueMemberM); ok {
		ms := func(k string) string {
			if v, ok := m.Value[k].(*types.AttributeValueMemberS); ok {
				return v.Value
			}
			return ""
		}
		r.Metadata = lockmgr.Metadata{
			User: ms("user"), CISystem: ms("ci_system"), CIRunID: ms("ci_run_id"),
			DeploymentID: ms("deployment_id"), GitCommit: ms("git_commit"), GitBranch: ms("git_branch"),
			Hostname: ms("hostname"), Operation: lockmgr.Operation(ms("operation")), Command: ms("command"),
		}
		switch v := m.Value["pid"].(type) {
		case *types.AttributeValueMemberN:
			pid, _ := strconv.Atoi(v.Value)
			r.Metadata.PID = pid
		case *types.AttributeValueMemberS:
			pid, _ := strconv.Atoi(v.Value)
			r.Metadata.PID = pid
		}
	}
	return r, err
}
