package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// AliasBomb returns the "billion laughs" deployer.yaml with the given number
// of alias levels, used once in a component's config.
func aliasBomb(levels int) []byte {
	var b strings.Builder
	b.WriteString("stack: bomb\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: 'true'}\n        config:\n")
	b.WriteString("          l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "          l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	fmt.Fprintf(&b, "          boom: *l%d\n", levels-1)
	return []byte(b.String())
}

func TestAliasBombIsRefusedAtTheAliasLine(t *testing.T) {
	for _, levels := range []int{6, 9, 30} {
		_, err := Parse(aliasBomb(levels), "deployer.yaml")
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 {
			t.Fatalf("%d levels: %v", levels, err)
		}
		p := ve.Problems[0]
		// l5 = 9^6 values: its second *l4 (9^5 = 59049 each) passes 100,000.
		if p.Line != 15 || !strings.Contains(p.Msg, "more than 100000 values by this alias (*l4)") || !strings.Contains(p.Msg, "write the values out") {
			t.Fatalf("%d levels: %s", levels, p)
		}
	}
}

func TestSmallAliasesAndMergeKeysStillWork(t *testing.T) {
	src := `stack: a
environments: {dev: {}}
services:
  s:
    components:
      one:
        kind: Command
        command: {create: 'true'}
        config: &common {region: eu-west-1, tags: &tags {team: a, cost: b}}
      two:
        kind: Command
        command: {create: 'true'}
        config: {<<: *common, extra: *tags, list: [*tags, *tags]}
`
	c, err := Parse([]byte(src), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Services["s"].Components["two"].Config
	if cfg["region"] != "eu-west-1" || cfg["extra"].(map[string]any)["team"] != "a" || len(cfg["list"].([]any)) != 2 {
		t.Fatalf("config = %v", cfg)
	}
}

func TestAliasCycleIsRefused(t *testing.T) {
	for _, src := range []string{"&a [*a]\n", "stack: x\nservices:\n  s: &a\n    components: {c: {kind: Command, config: {x: *a}}}\n"} {
		_, err := Parse([]byte(src), "deployer.yaml")
		if err == nil || !strings.Contains(err.Error(), "refers to a value that contains it") {
			t.Fatalf("%q: %v", src, err)
		}
	}
}

func TestLoadRefusesOversizeAndNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "deployer.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(inputfile.MaxConfigBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var tl *inputfile.TooLargeError
	if _, err := Load(big); !errors.As(err, &tl) || !strings.Contains(err.Error(), big+": the configuration file is 4.0 MiB, over the limit of 4 MiB") {
		t.Fatalf("oversize: %v", err)
	}
	var nr *inputfile.NotRegularError
	if _, err := Load("/dev/zero"); !errors.As(err, &nr) {
		t.Fatalf("/dev/zero: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "64MiB": 64 << 20, "100 MB": 100e6, "1GiB": 1 << 30, "5KB": 5000, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "1.5GiB", "lots", "9999999999GiB"} {
		if _, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "64MiB") {
			t.Errorf("ParseSize(%q) = %v", in, err)
		}
	}
	c, err := Parse([]byte("stack: a\nbackend: {max_state_size: 128MiB}\n"), "deployer.yaml")
	if err != nil || c.Backend.MaxStateSize != 128<<20 {
		t.Fatalf("max_state_size: %v", err)
	}
	_, err = Parse([]byte("stack: a\nbackend:\n  max_state_size: huge\n"), "deployer.yaml")
	if err == nil || !strings.Contains(err.Error(), "deployer.yaml:3: backend.max_state_size: invalid size") {
		t.Fatalf("bad max_state_size: %v", err)
	}
	if err := ApplyEnv(c, func(k string) string { return map[string]string{"DEPLOYER_MAX_STATE_SIZE": "1GiB"}[k] }); err != nil || c.Backend.MaxStateSize != 1<<30 {
		t.Fatalf("env: %v", err)
	}
}

// A file that may hold more values than the bound is refused before it is
// parsed, with the limit and how to raise it; WithMaxValues raises it.
func TestTooManyValuesAreRefusedBeforeParsing(t *testing.T) {
	data := tinyValuesYAML(1 << 20) // about 500,000 values
	_, err := Parse(data, "deployer.yaml")
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || !strings.Contains(err.Error(), "over the limit of 250000") ||
		!strings.Contains(err.Error(), "DEPLOYER_MAX_CONFIG_VALUES") {
		t.Fatalf("%v", err)
	}
	if _, err := Parse(data, "deployer.yaml", WithMaxValues(600_000)); err != nil {
		t.Errorf("a raised bound should accept the file: %v", err)
	}
	if _, err := ParseMaxValues("lots"); err == nil {
		t.Error("ParseMaxValues accepted lots")
	}
}
