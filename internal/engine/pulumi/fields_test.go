package pulumi

import (
	"encoding/json"
	"testing"
)

func TestFieldsKeepsTheFirstBadValue(t *testing.T) {
	cfg := map[string]any{
		"instance": map[string]any{"storage": map[string]any{"allocatedGB": "lots"}, "multiAZ": "yes"},
		"port":     json.Number("5432"),
		"subnets":  []any{"a", "b"},
	}
	f := &fields{cfg: cfg, addr: "data/db"}
	if got := f.num("port", 1); got != 5432 {
		t.Errorf("port = %v, want 5432", got)
	}
	if got := f.list("subnets"); len(got) != 2 || got[1] != "b" {
		t.Errorf("subnets = %v", got)
	}
	if f.err != nil {
		t.Fatalf("err after good reads: %v", f.err)
	}
	if got := f.num("instance.storage.allocatedGB", 20); got != 20 {
		t.Errorf("bad number read = %v, want the default 20", got)
	}
	f.boolean("instance.multiAZ", false)
	want := "data/db: config instance.storage.allocatedGB: lots is not a number"
	if f.err == nil || f.err.Error() != want {
		t.Errorf("err = %v, want %q (the first bad value)", f.err, want)
	}
	if got := f.num("absent", 7); got != 7 {
		t.Errorf("absent = %v, want 7", got)
	}
}
