package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// Defaults (docs/configuration.md#keys; lock_ttl from docs/locking.md#lifetime).
const (
	DefaultBackendURL = "file://.deployer"
	DefaultLockTTL    = time.Hour
	// DefaultParallelism is how many components apply at once, as
	// Terraform's -parallelism.
	DefaultParallelism       = 10
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultStaleAfter        = 2 * time.Minute
	DefaultMaxClockSkew      = 30 * time.Second
	DefaultSecretsProvider   = "passphrase"
)

// ErrNoConfig is wrapped by the error of Load when there is no file at path
// (with os.ErrNotExist): commands that also work from flags alone fall back
// to Default on it.
var ErrNoConfig = errors.New("no deployer.yaml")

// noConfigError is Load's error for a missing file: it says how to get one.
type noConfigError struct{ path string }

func (e *noConfigError) Error() string {
	return e.path + " not found: run deployer in the directory of your deployer.yaml, pass --config FILE, or create one with deployer init"
}

func (e *noConfigError) Is(target error) bool {
	return target == ErrNoConfig || target == os.ErrNotExist
}

// Load reads deployer.yaml at path, fills Path and Dir (absolute), applies the
// defaults and validates it. Problems are returned together as a
// *ValidationError whose lines read "FILE:LINE: YAML.PATH: problem (fix)";
// a missing file gives an error wrapping ErrNoConfig and os.ErrNotExist, and
// another unreadable file the os error wrapped. WithBackends gives the
// schemes backend.state and backend.lock are checked against.
func Load(path string, opts ...Option) (*Config, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, &noConfigError{path: path}
	}
	data, err := inputfile.Read(path, "configuration file", inputfile.MaxConfigBytes)
	if err != nil {
		if inputfile.IsLimit(err) {
			return nil, err
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	c, err := Parse(data, path, opts...)
	if err != nil {
		return nil, err
	}
	c.Path, c.Dir = abs, filepath.Dir(abs)
	if c.Metrics.EMF != "" && !filepath.IsAbs(c.Metrics.EMF) {
		c.Metrics.EMF = filepath.Join(c.Dir, c.Metrics.EMF) // relative to deployer.yaml
	}
	return c, nil
}

// Parse is Load for bytes already read; name is the file name used in
// messages. Path and Dir are left empty.
func Parse(data []byte, name string, opts ...Option) (*Config, error) {
	l := newLoader(name, opts)
	c := l.parse(data)
	if len(l.probs) == 0 {
		applyDefaults(c)
		l.checkTimings(&c.Backend, "backend")
		l.checkCycles(c)
	}
	if len(l.probs) > 0 {
		e := &ValidationError{File: name, Problems: l.probs}
		e.sort()
		return nil, e
	}
	return c, nil
}

// Default returns the configuration used when there is no deployer.yaml: the
// defaults, no environments or services, Dir the working directory.
func Default() *Config {
	c := &Config{}
	applyDefaults(c)
	if wd, err := os.Getwd(); err == nil {
		c.Dir = wd
	}
	return c
}

func applyDefaults(c *Config) {
	b := &c.Backend
	if b.State == "" {
		b.State = DefaultBackendURL
	}
	if b.Lock == "" {
		b.Lock = DefaultBackendURL
	}
	if c.Parallelism == 0 {
		c.Parallelism = DefaultParallelism
	}
	if b.LockTTL == 0 {
		b.LockTTL = DefaultLockTTL
	}
	if b.HeartbeatInterval == 0 {
		b.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if b.StaleAfter == 0 {
		b.StaleAfter = DefaultStaleAfter
	}
	if b.MaxClockSkew == 0 {
		b.MaxClockSkew = DefaultMaxClockSkew
	}
	if c.Pulumi.SecretsProvider == "" {
		c.Pulumi.SecretsProvider = DefaultSecretsProvider
	}
	if c.Environments == nil {
		c.Environments = map[string]*Environment{}
	}
	if c.Services == nil {
		c.Services = map[string]*Service{}
	}
	for _, s := range c.Services {
		if s.Components == nil {
			s.Components = map[string]*Component{}
		}
	}
	if c.Shared == nil {
		c.Shared = map[string]*Shared{}
	}
}

// loader decodes the YAML node tree into the model (decode.go), collecting
// problems.
type loader struct {
	file     string
	probs    []Problem
	at       map[string]at // where each decoded value was written, by YAML path
	backends BackendSchemes
	kinds    map[string]Kind // WithKinds, by name; nil: any kind
	sections []string        // a component's keys with the kinds' own sections (withSections)
	// maxValues bounds the values of the file (WithMaxValues).
	maxValues int
}

func newLoader(file string, opts []Option) *loader {
	l := &loader{file: file, at: map[string]at{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

func (l *loader) add(line int, path, format string, args ...any) {
	l.probs = append(l.probs, Problem{File: l.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (l *loader) parse(data []byte) *Config {
	c := &Config{}
	if !l.checkValues(data) {
		return c
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		l.add(line, "", "invalid YAML: %s (check the indentation and quoting on this line and the one before)", msg)
		return c
	}
	if !l.checkAliases(&doc) {
		return c
	}
	if len(doc.Content) == 0 {
		l.add(0, "", "the file is empty (write stack:, environments: and services:, or run deployer init for a starter file)")
		return c
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		l.add(root.Line, "", "the top level must be a mapping with stack:, backend:, pulumi:, environments: and services:")
		return c
	}
	l.decodeStruct(root, "", reflect.ValueOf(c).Elem())
	l.checkShared(c)
	if len(l.probs) == 0 {
		l.checkComponents(c)
		l.checkMoves(c)
		l.checkOutputs(c)
	}
	return c
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// entries iterates a mapping with free keys, reporting duplicates and
// non-mappings. A null value counts as an empty mapping.
func (l *loader) entries(n *yaml.Node, path, want string, fn func(key string, k, v *yaml.Node)) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.add(n.Line, path, "want a mapping of %s, found %s", want, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if first, dup := seen[k.Value]; dup {
			l.add(k.Line, join(path, k.Value), "duplicate key (first defined on line %d; remove one)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if isNull(n) {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

// str reads a scalar as a string; null is "".
func (l *loader) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		l.add(n.Line, path, "want a string, found %s", kindName(n))
		return "", false
	}
	if isNull(n) {
		return "", true
	}
	return n.Value, true
}

func (l *loader) duration(n *yaml.Node, path string) time.Duration {
	s, ok := l.str(n, path)
	if !ok || s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		l.add(n.Line, path, "invalid duration %q (use a number with a unit, e.g. 30s, 5m, 1h)", s)
		return 0
	}
	if d <= 0 {
		l.add(n.Line, path, "duration %q must be positive (e.g. 30s, 5m, 1h)", s)
		return 0
	}
	return d
}

// strList reads a list of strings; null is nil. Each element's line is
// remembered under PATH[i].
func (l *loader) strList(n *yaml.Node, path string) []string {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.add(n.Line, path, "want a list such as [a, b], found %s", kindName(n))
		return nil
	}
	var out []string
	for i, e := range n.Content {
		e = deref(e)
		p := fmt.Sprintf("%s[%d]", path, i)
		if s, ok := l.str(e, p); ok {
			out = append(out, s)
			l.at[p] = at{val: e}
		}
	}
	return out
}

// value converts a node to map[string]any / []any / int / float64 / string /
// bool / nil, following aliases and "<<" merge keys.
func (l *loader) value(n *yaml.Node, path string) any {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				if mm, ok := l.value(v, path).(map[string]any); ok {
					for mk, mv := range mm {
						if _, set := m[mk]; !set {
							m[mk] = mv
						}
					}
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				l.add(k.Line, path, "keys must be strings")
				continue
			}
			m[k.Value] = l.value(v, join(path, k.Value))
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			out[i] = l.value(e, fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	case yaml.ScalarNode:
		// The common tags without a decoder per scalar (large files).
		switch n.Tag {
		case "!!str":
			return n.Value
		case "!!null":
			return nil
		case "!!int":
			if i, err := strconv.Atoi(n.Value); err == nil {
				return i
			}
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value
		}
		switch t := v.(type) {
		case nil, bool, int, float64, string:
			return t
		case int64:
			return int(t)
		case uint64:
			return float64(t)
		default:
			return n.Value
		}
	}
	return nil
}

// configMap reads a "config:"-like mapping; null is nil.
func (l *loader) configMap(n *yaml.Node, path string) map[string]any {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.add(n.Line, path, "want a mapping of keys to values, found %s", kindName(n))
		return nil
	}
	m, _ := l.value(n, path).(map[string]any)
	return m
}
