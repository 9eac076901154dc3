package statestore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// snapshotTimeLayout is the time part of a history snapshot name (docs/state-format.md#history-snapshots):
// UTC, millisecond precision, no colons so it is a valid file and object name.
const snapshotTimeLayout = "2006-01-02T15-04-05.000Z"

// SnapshotName returns the name of the history snapshot of serial written at
// t: "{YYYY-MM-DDTHH-MM-SS.mmmZ}-{serial}.json" with t in UTC, e.g.
// "2024-01-15T14-20-00.000Z-12.json" (docs/state-format.md#history-snapshots). Every backend names its
// snapshots with it.
func SnapshotName(t time.Time, serial int64) string {
	return t.UTC().Format(snapshotTimeLayout) + "-" + strconv.FormatInt(serial, 10) + ".json"
}

// ParseSnapshotName is the inverse of SnapshotName: it returns the serial and
// time (UTC, millisecond precision) a snapshot name encodes, and an error for
// any other name.
func ParseSnapshotName(name string) (SnapshotInfo, error) {
	base, ok := strings.CutSuffix(name, ".json")
	i := strings.LastIndexByte(base, '-')
	if !ok || i < 0 {
		return SnapshotInfo{}, fmt.Errorf("%q is not a snapshot name: want {YYYY-MM-DDTHH-MM-SS.mmmZ}-{serial}.json", name)
	}
	serial, err := strconv.ParseInt(base[i+1:], 10, 64)
	if err != nil || serial < 0 || strconv.FormatInt(serial, 10) != base[i+1:] {
		return SnapshotInfo{}, fmt.Errorf("%q is not a snapshot name: serial %q is not a non-negative integer", name, base[i+1:])
	}
	t, err := time.ParseInLocation(snapshotTimeLayout, base[:i], time.UTC)
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("%q is not a snapshot name: time %q: want YYYY-MM-DDTHH-MM-SS.mmmZ", name, base[:i])
	}
	return SnapshotInfo{Serial: serial, Time: t, Name: name}, nil
}
