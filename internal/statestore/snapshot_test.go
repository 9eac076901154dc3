package statestore

import (
	"testing"
	"time"
)

func TestSnapshotName(t *testing.T) {
	at := time.Date(2024, 1, 15, 15, 20, 0, 7_999_999, time.FixedZone("CET", 3600))
	name := SnapshotName(at, 12)
	if name != "2024-01-15T14-20-00.007Z-12.json" {
		t.Fatalf("SnapshotName = %q, want 2024-01-15T14-20-00.007Z-12.json (UTC, milliseconds)", name)
	}
	info, err := ParseSnapshotName(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Serial != 12 || !info.Time.Equal(at.Truncate(time.Millisecond)) || info.Name != name || info.Time.Location() != time.UTC {
		t.Fatalf("ParseSnapshotName(%q) = %+v", name, info)
	}
}

func TestParseSnapshotNameRefusesOtherNames(t *testing.T) {
	for _, name := range []string{
		"", "state.json", ".state.json.tmp-123", "2024-01-15-10-30-00.json", "2024-01-15T14-20-00.000Z-.json",
		"2024-01-15T14-20-00.000Z-x.json", "2024-01-15T14-20-00.000Z--1.json", "2024-01-15T14-20-00.000Z-01.json",
		"2024-01-15T14-20-00.000Z-12.json.tmp", "2024-13-15T14-20-00.000Z-12.json",
	} {
		if info, err := ParseSnapshotName(name); err == nil {
			t.Errorf("ParseSnapshotName(%q) = %+v, want an error", name, info)
		}
	}
}
