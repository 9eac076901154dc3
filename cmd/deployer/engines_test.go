package main

import (
	"slices"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
)

// The engines' catalogs are the one source of kinds: config's default list
// (what tests that load configs without cmd/deployer see) must not drift.
func TestKnownKindsComeFromTheEngines(t *testing.T) {
	if got := knownKinds(); !slices.Equal(got, config.KnownKinds) {
		t.Errorf("the engines' kinds %v differ from config.KnownKinds %v: update config's default", got, config.KnownKinds)
	}
}
