package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const movedBase = "stack: s\nenvironments:\n  prod: {}\nservices:\n  data:\n    components:\n      database: {kind: Command, command: {create: 'true'}}\n  storage:\n    components:\n      cache: {kind: Command, command: {create: 'true'}}\n"

func TestMovedIsReadInOrder(t *testing.T) {
	c, err := Parse([]byte(movedBase+"moved:\n  - {from: data/db, to: data/database}\n  - from: store\n    to: storage\n"), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Move{{From: "data/db", To: "data/database"}, {From: "store", To: "storage"}}
	if diff := cmp.Diff(want, c.Moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	r, err := c.Resolve("prod")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, r.Moves); diff != "" {
		t.Errorf("resolved moves (-want +got):\n%s", diff)
	}
}

func TestMovedProblems(t *testing.T) {
	tests := []struct{ name, moved, want string }{
		{"to missing", "  - {from: data/db}\n", "moved[0]: write both from: and to:"},
		{"shapes differ", "  - {from: data, to: data/database}\n", `from "data" and to "data/database" must both be components`},
		{"from still declared", "  - {from: data/database, to: storage/cache}\n", "data/database is still declared under services"},
		{"to not declared", "  - {from: data/db, to: data/databse}\n", `data/databse is not declared under services (did you mean "data/database"?)`},
		{"bad name", "  - {from: data/DB, to: data/database}\n", `invalid address "data/DB"`},
		{"moved twice", "  - {from: data/db, to: data/database}\n  - {from: data/db, to: storage/cache}\n", "data/db is moved twice (first in moved[0])"},
		{"not a list", "  from: a\n", "moved: want a list, found a mapping"},
		{"unknown key", "  - {from: data/db, too: data/database}\n", `moved[0].too: unknown key (did you mean "to"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(movedBase+"moved:\n"+tt.moved), "deployer.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
