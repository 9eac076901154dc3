package engines

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
)

func TestKindsAreEveryEnginesCatalogOnce(t *testing.T) {
	var got []string
	for _, k := range Kinds() {
		got = append(got, k.Name)
	}
	want := []string{"Command", "ElastiCacheRedis", "MicroService", "PulumiResource", "RDS", "StackReference"}
	if !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	seen := map[string]string{}
	for _, e := range New(Options{}) {
		for _, k := range e.Kinds() {
			if other, ok := seen[k.Name]; ok {
				t.Errorf("kind %s is in the catalogs of engines %s and %s", k.Name, other, e.Name())
			}
			seen[k.Name] = e.Name()
			if !e.Handles(k.Name) {
				t.Errorf("engine %s lists kind %s but does not handle it", e.Name(), k.Name)
			}
		}
	}
}

func TestConfigRefusesAKindNoEngineApplies(t *testing.T) {
	yaml := "stack: s\nenvironments: {dev: {}}\nservices:\n  a:\n    components:\n      fn: {kind: Lambda}\n"
	_, err := config.Parse([]byte(yaml), "deployer.yaml", config.WithKinds(Kinds()))
	var ve *config.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), `unknown kind "Lambda" (known kinds: Command, ElastiCacheRedis, MicroService, PulumiResource, RDS, StackReference)`) {
		t.Errorf("err = %v, want the unknown kind with the registry's kinds", err)
	}
}
