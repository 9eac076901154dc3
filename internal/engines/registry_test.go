package engines

import (
	"errors"
	"reflect"
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

// A kind's own section is decoded and checked by its engine, with lines
// and paths as config reports its own problems.
func TestEnginesDecodeTheirSections(t *testing.T) {
	bad := "stack: s\nenvironments: {dev: {}}\nservices:\n  a:\n    components:\n      j: {kind: Command, command: {create: x, timeout: 10, updat: y}}\n"
	_, err := config.Parse([]byte(bad), "deployer.yaml", config.WithKinds(Kinds()))
	want := "deployer.yaml has 2 problems:\n" +
		`  deployer.yaml:6: services.a.components.j.command.timeout: invalid duration "10" (use a number with a unit, e.g. 30s, 5m, 1h)` + "\n" +
		`  deployer.yaml:6: services.a.components.j.command.updat: unknown key (did you mean "update"?)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	good := "stack: s\nenvironments: {dev: {}}\nservices:\n  a:\n    components:\n" +
		"      j: {kind: Command, command: {create: ./up.sh, delete: '', timeout: 120s}}\n" +
		"      k: {kind: Command, command: {create: ./up.sh, timeout: 10m}}\n"
	c, err := config.Parse([]byte(good), "deployer.yaml", config.WithKinds(Kinds()))
	if err != nil {
		t.Fatal(err)
	}
	comps := c.Services["a"].Components
	if got := comps["j"].Settings; !reflect.DeepEqual(got, map[string]map[string]any{"command": {"create": "./up.sh", "timeout": "2m0s"}}) {
		t.Errorf("j settings = %v, want the commands with the timeout as a Go duration", got)
	}
	if got := comps["k"].Settings; !reflect.DeepEqual(got, map[string]map[string]any{"command": {"create": "./up.sh"}}) {
		t.Errorf("k settings = %v, want the default timeout left out", got)
	}
}

// command.grace is a positive duration of at most 10m, reported with its
// line; a valid one is a setting the engine applies and the state records.
func TestCommandGraceIsCheckedAndKept(t *testing.T) {
	bad := "stack: s\nenvironments: {dev: {}}\nservices:\n  a:\n    components:\n" +
		"      j: {kind: Command, command: {create: x, grace: 11m}}\n" +
		"      k:\n        kind: Command\n        command:\n          create: x\n          grace: -1s\n"
	_, err := config.Parse([]byte(bad), "deployer.yaml", config.WithKinds(Kinds()))
	want := "deployer.yaml has 2 problems:\n" +
		`  deployer.yaml:6: services.a.components.j.command.grace: duration "11m" is over the 10m0s maximum (a cancelled deploy holds its lock while the command cleans up)` + "\n" +
		`  deployer.yaml:11: services.a.components.k.command.grace: duration "-1s" must be positive (e.g. 30s, 5m, 1h)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	good := "stack: s\nenvironments: {dev: {}}\nservices:\n  a:\n    components:\n      j: {kind: Command, command: {create: x, grace: 20s}}\n"
	c, err := config.Parse([]byte(good), "deployer.yaml", config.WithKinds(Kinds()))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Services["a"].Components["j"].Settings; !reflect.DeepEqual(got, map[string]map[string]any{"command": {"create": "x", "grace": "20s"}}) {
		t.Errorf("j settings = %v, want the grace as a Go duration", got)
	}
}
