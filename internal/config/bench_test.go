package config

import (
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// tinyValuesYAML is a valid deployer.yaml of size bytes, nearly all of it
// one flow list of one-character values (two million of them at 4 MiB):
// the most values a file within the size limit can hold.
func tinyValuesYAML(size int) []byte {
	var b strings.Builder
	b.WriteString("stack: slow\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: 'true'}\n        config:\n          big: [1")
	for b.Len() < size-8 {
		b.WriteString(",1")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// BenchmarkParse4MiBOfTinyValues parses the largest file of tiny values
// the size limit allows (4 MiB, two million values): refused, before
// parsing, by the bound on values (docs/configuration.md, "Limits on
// input"). BenchmarkParseMostTinyValues parses the largest file that bound
// accepts, and resolves it.
// Run with: go test -run '^$' -bench 'Parse(4MiB|Most)' -benchmem ./internal/config/
func BenchmarkParse4MiBOfTinyValues(b *testing.B) {
	data := tinyValuesYAML(int(inputfile.MaxConfigBytes))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "deployer.yaml"); err == nil || !strings.Contains(err.Error(), "over the limit of 250000") {
			b.Fatalf("a 4 MiB file of two million values: %v", err)
		}
	}
}

func BenchmarkParseMostTinyValues(b *testing.B) {
	data := tinyValuesYAML(2*DefaultMaxValues - 16) // one separator per value: ",1"
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Parse(data, "deployer.yaml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Resolve("dev"); err != nil {
			b.Fatal(err)
		}
	}
}
