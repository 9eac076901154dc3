package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestEventsUseSeed000FieldNames(t *testing.T) {
	var buf bytes.Buffer
	New(&buf).Info("lock.released", "lock_key", "stack:s:env:e", "lock_id", "id-1", "duration_seconds", 342.0)
	var ev map[string]any
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["event"] != "lock.released" || ev["level"] != "INFO" || ev["lock_key"] != "stack:s:env:e" || ev["duration_seconds"] != 342.0 {
		t.Errorf("event = %v", ev)
	}
	if _, ok := ev["timestamp"].(string); !ok {
		t.Errorf("no timestamp: %v", ev)
	}
	if _, ok := ev["msg"]; ok {
		t.Errorf("slog's msg key leaked: %v", ev)
	}
}

func TestOpenAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	for range 2 {
		l, c, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		l.Info("deploy.started")
		c.Close()
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Fatalf("want 2 lines appended, got %d:\n%s", n, data)
	}
}
