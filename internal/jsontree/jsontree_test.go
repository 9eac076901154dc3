package jsontree

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCopy(t *testing.T) {
	in := map[string]any{
		"name": "db", "password": "s3cr3t", "__private": 1,
		"nested": map[string]any{"token": []any{"a"}, "list": []any{map[string]any{"password": nil, "x": 1}}},
		"empty":  map[string]any(nil),
	}
	maskAndDrop := func(key string, v any) (any, bool) {
		switch {
		case strings.HasPrefix(key, "__"):
			return Omit, true
		case v != nil && (key == "password" || key == "token"):
			return "(sensitive)", true
		}
		return nil, false
	}
	got := Copy(in, maskAndDrop)
	want := map[string]any{
		"name": "db", "password": "(sensitive)",
		"nested": map[string]any{"token": "(sensitive)", "list": []any{map[string]any{"password": nil, "x": 1}}},
		"empty":  map[string]any{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Copy (-want +got):\n%s", diff)
	}
	if in["password"] != "s3cr3t" || in["__private"] != 1 {
		t.Errorf("Copy changed its input: %v", in)
	}

	deep := Copy(in, nil).(map[string]any)
	deep["nested"].(map[string]any)["list"].([]any)[0].(map[string]any)["x"] = 2
	if in["nested"].(map[string]any)["list"].([]any)[0].(map[string]any)["x"] != 1 {
		t.Error("a copy with no rewrite shares a nested map with its input")
	}
	if got := Copy("scalar", func(string, any) (any, bool) { return Omit, true }); got != nil {
		t.Errorf("an omitted root = %v, want nil", got)
	}
}

func TestMapStringsReachesKeysAndNestedStringsAndLeavesTheInputAlone(t *testing.T) {
	in := map[string]any{
		"dsn":         "postgres://app:hunter2@db/app",
		"hunter2-key": []any{"x hunter2 y", 3, true, map[string]any{"k": "hunter2"}},
	}
	got := MapStrings(in, func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") })
	want := map[string]any{
		"dsn":     "postgres://app:***@db/app",
		"***-key": []any{"x *** y", 3, true, map[string]any{"k": "***"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MapStrings (-want +got):\n%s", diff)
	}
	if in["dsn"] != "postgres://app:hunter2@db/app" || in["hunter2-key"].([]any)[0] != "x hunter2 y" {
		t.Errorf("MapStrings changed its input: %#v", in)
	}
}
func TestMerge(t *testing.T) {
	base := map[string]any{
		"scaling": map[string]any{"minReplicas": 2, "maxReplicas": 10, "policy": map[string]any{"cpu": 70}},
		"ports":   []any{80, 443},
		"image":   map[string]any{"tag": "v1"},
		"debug":   true,
	}
	override := map[string]any{
		"scaling": map[string]any{"minReplicas": 5, "policy": map[string]any{"memory": 80}},
		"ports":   []any{8080},
		"image":   "registry/app:v2", // a scalar replaces a map
		"debug":   nil,               // null removes
		"extra":   map[string]any{"a": 1},
	}
	got := Merge(base, override)
	want := map[string]any{
		"scaling": map[string]any{"minReplicas": 5, "maxReplicas": 10, "policy": map[string]any{"cpu": 70, "memory": 80}},
		"ports":   []any{8080},
		"image":   "registry/app:v2",
		"extra":   map[string]any{"a": 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	got["scaling"].(map[string]any)["minReplicas"] = 99
	got["extra"].(map[string]any)["a"] = 99
	if base["scaling"].(map[string]any)["minReplicas"] != 2 || override["extra"].(map[string]any)["a"] != 1 {
		t.Errorf("Merge result shares maps with its arguments")
	}
	if m := Merge(nil, nil); m == nil || len(m) != 0 {
		t.Errorf("Merge(nil, nil) = %#v, want an empty map", m)
	}
}
