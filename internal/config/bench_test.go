package config

import (
	"fmt"
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

// manyComponentsYAML is a deployer.yaml of services services of 40
// components each, every component using each component key: the schema
// part of parsing (sections, keys, lines), not large config values.
func manyComponentsYAML(services int) []byte {
	var b strings.Builder
	b.WriteString("stack: many\nbackend: {state: file://.deployer, lock: file://.deployer, lock_ttl: 1h, heartbeat_interval: 30s}\n")
	b.WriteString("pulumi: {secrets_provider: passphrase}\nparallelism: 4\nenvironments:\n  dev: {config: {region: eu-west-1}}\n  prod: {}\nservices:\n")
	for s := range services {
		fmt.Fprintf(&b, "  svc-%d:\n    components:\n", s)
		for c := range 40 {
			fmt.Fprintf(&b, "      c-%d:\n        kind: Command\n", c)
			if c > 0 {
				fmt.Fprintf(&b, "        depends_on: [c-%d]\n", c-1)
			}
			b.WriteString("        config: {image: {tag: v1}, replicas: 2}\n        environments: {prod: {replicas: 5}}\n        secrets: [image.tag]\n")
			b.WriteString("        command: {create: ./create.sh, delete: ./delete.sh, timeout: 2m}\n")
		}
	}
	b.WriteString("shared:\n  db:\n    stop: ./stop.sh\n    sharers: {app-a: {status_url: http://a/health}}\n")
	return []byte(b.String())
}

// BenchmarkParseManyComponents parses 2,000 components (50 services of
// 40) that use every component key, checked against kinds and backends as
// the CLI checks them.
func BenchmarkParseManyComponents(b *testing.B) {
	data := manyComponentsYAML(50)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Parse(data, "deployer.yaml", WithKinds(testKinds), WithBackends(testBackends))
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Services) != 50 {
			b.Fatalf("%d services", len(c.Services))
		}
	}
}
