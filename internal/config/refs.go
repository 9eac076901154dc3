package config

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// refPattern matches a reference to a value kept outside deployer.yaml
// (docs/secrets.md): ${env:NAME}, ${file:PATH}, and the same marked secret,
// ${secret:env:NAME}, ${secret:file:PATH}.
var refPattern = regexp.MustCompile(`\$\{(secret:)?(env|file):([^}]*)\}`)

// ResolveReferences replaces, in res (as Resolve returned it), every
// ${env:NAME} and ${file:PATH} reference inside a string of a component's
// config or of the environment's config by the variable's value or the
// file's content (PATH relative to deployer.yaml's directory; one trailing
// newline removed). A string holding a reference marked secret
// (${secret:env:NAME}) becomes a secret value {secret: true, value: ...};
// so does every value at a path of the component's secrets: list. Values
// under keys named like password/secret/token/key are secrets already.
// getenv reads variables (an empty value counts as unset).
//
// A variable that is unset, or a file that cannot be read, is a
// *ValidationError naming the YAML path, before any backend is touched.
func ResolveReferences(c *Config, res *Resolved, getenv func(string) string) error {
	file := "deployer.yaml"
	if c.Path != "" {
		file = filepath.Base(c.Path)
	}
	r := refResolver{file: file, dir: c.Dir, getenv: getenv, verr: &ValidationError{File: file}}
	if res.EnvConfig != nil {
		res.EnvConfig = r.mapValue("environments."+res.Env+".config", res.EnvConfig, false)
	}
	for _, addr := range slices.Sorted(maps.Keys(res.Components)) {
		rc := res.Components[addr]
		base := "services." + rc.Service + ".components." + rc.Name + ".config"
		rc.Config = r.mapValue(base, rc.Config, false)
		for _, p := range rc.Secrets {
			wrapPath(rc.Config, p)
		}
	}
	wrapEqualValues(res)
	if len(r.verr.Problems) > 0 {
		r.verr.sort()
		return r.verr
	}
	return nil
}

type refResolver struct {
	file, dir string
	getenv    func(string) string
	verr      *ValidationError
	read      int64 // bytes read by ${file:} so far, at most inputfile.MaxReferencedTotal
}

func (r *refResolver) mapValue(path string, m map[string]any, secret bool) map[string]any {
	for k, v := range m {
		m[k] = r.value(path+"."+k, k, v, secret)
	}
	return m
}

// value resolves the references in v, found at path under key ("" for a
// list element); secret says it is inside a secret already. Whether v is
// a secret is asked once, here: under a key named like one, or written
// {secret: true, value: X}.
func (r *refResolver) value(path, key string, v any, secret bool) any {
	secret = secret || (key != "" && sensitive.IsSecretKey(key))
	if sensitive.IsSecretValue(v) {
		t := v.(map[string]any)
		t["value"] = r.value(path, "", t["value"], true)
		return t
	}
	switch t := v.(type) {
	case string:
		return r.text(path, t, secret)
	case map[string]any:
		return r.mapValue(path, t, secret)
	case []any:
		for i, x := range t {
			t[i] = r.value(path+"["+strconv.Itoa(i)+"]", "", x, secret)
		}
	}
	return v
}

// text resolves the references in s; a reference marked secret, a
// ${env:NAME} of a variable named like a secret (sensitive.IsSecretKey:
// PULUMI_ACCESS_TOKEN, ARM_CLIENT_SECRET, DB_PASS) or of a CI secret
// (sensitive.IsKnownSecretVar), a ${file:PATH} whose path is named like a
// secret (secrets/db.txt, tls/server_key.pem) or whose content holds a CI
// secret's value makes the result, outside a secret already, a secret value
// (docs/secrets.md#what-is-a-secret).
func (r *refResolver) text(path, s string, secret bool) any {
	if !strings.Contains(s, "${") {
		return s
	}
	marked := false
	out := refPattern.ReplaceAllStringFunc(s, func(ref string) string {
		m := refPattern.FindStringSubmatch(ref)
		marked = marked || m[1] != ""
		switch m[2] {
		case "env":
			name := m[3]
			if v := r.getenv(name); v != "" {
				marked = marked || sensitive.IsKnownSecretVar(name) || sensitive.IsSecretKey(name)
				return v
			}
			r.problem(path, fmt.Sprintf("%s: environment variable %s is not set (export it before running deployer, e.g. from your CI's secrets)", ref, name))
		case "file":
			p := m[3]
			if !filepath.IsAbs(p) && r.dir != "" {
				p = filepath.Join(r.dir, p)
			}
			limit := min(inputfile.MaxReferencedBytes, inputfile.MaxReferencedTotal-r.read)
			data, err := inputfile.Read(p, "file referenced by ${file:}", limit)
			if err == nil {
				r.read += int64(len(data))
				marked = marked || sensitive.IsSecretKey(m[3]) || r.holdsKnownSecret(data)
				v := strings.TrimSuffix(string(data), "\n")
				return strings.TrimSuffix(v, "\r")
			}
			if limit < inputfile.MaxReferencedBytes && inputfile.IsLimit(err) {
				err = fmt.Errorf("%w; all ${file:} references together may read %s", err, inputfile.Size(inputfile.MaxReferencedTotal))
			}
			r.problem(path, fmt.Sprintf("%s: cannot read %s: %v (the path is relative to the directory of %s)", ref, p, err, r.file))
		}
		return ""
	})
	if marked && !secret {
		return sensitive.Wrap(out)
	}
	return out
}

// holdsKnownSecret reports whether data holds the value of a CI secret
// variable set in the environment (sensitive.KnownSecretVarNames).
func (r *refResolver) holdsKnownSecret(data []byte) bool {
	for _, name := range sensitive.KnownSecretVarNames() {
		if v := r.getenv(name); v != "" && bytes.Contains(data, []byte(v)) {
			return true
		}
	}
	return false
}

// wrapEqualValues makes every value of res's configs whose text equals a
// secret's (a string, or a number by its decimal form; at least
// sensitive.MinMaskLength bytes) a secret value too, wherever it sits:
// `alias: <the value of db_password>` is sealed and shown as (sensitive)
// like the password (docs/secrets.md#what-is-a-secret).
func wrapEqualValues(res *Resolved) {
	known := map[string]bool{}
	collect := func(m map[string]any) {
		walkSecrets(m, false, func(v any) {
			for _, t := range sensitive.Texts(v) {
				if len(t) >= sensitive.MinMaskLength {
					known[t] = true
				}
			}
		})
	}
	collect(res.EnvConfig)
	for _, rc := range res.Components {
		collect(rc.Config)
	}
	if len(known) == 0 {
		return
	}
	wrap := func(m map[string]any) {
		for k, v := range m {
			m[k] = wrapEqual(k, v, known)
		}
	}
	wrap(res.EnvConfig)
	for _, rc := range res.Components {
		wrap(rc.Config)
	}
}

// walkSecrets calls fn with each secret value under v (under a key named
// like a secret, or written {secret: true, value: X}).
func walkSecrets(v any, secret bool, fn func(any)) {
	if v == nil {
		return
	}
	if secret || sensitive.IsSecretValue(v) {
		fn(v)
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			walkSecrets(x, sensitive.IsSecretKey(k), fn)
		}
	case []any:
		for _, x := range t {
			walkSecrets(x, false, fn)
		}
	}
}

// wrapEqual returns v, under key k, with every leaf outside a secret whose
// text is known wrapped as a secret value.
func wrapEqual(k string, v any, known map[string]bool) any {
	if v == nil || sensitive.IsSecretKey(k) || sensitive.IsSecretValue(v) {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		for k2, x := range t {
			t[k2] = wrapEqual(k2, x, known)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = wrapEqual("", x, known)
		}
		return t
	}
	if texts := sensitive.Texts(v); len(texts) == 1 && known[texts[0]] {
		return sensitive.Wrap(v)
	}
	return v
}

func (r *refResolver) problem(path, msg string) {
	r.verr.Problems = append(r.verr.Problems, Problem{File: r.file, Path: path, Msg: msg})
}

// wrapPath makes the value at path ("db.password", "keys[0]") inside m a
// secret value; a path that is absent is left alone.
func wrapPath(m map[string]any, path string) {
	var parent any = m
	var set func(any)
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		steps := []any{key}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return
			}
			steps = append(steps, n)
			rest = strings.TrimPrefix(after, "[")
		}
		for _, st := range steps {
			if sensitive.IsSecretValue(cur) {
				return
			}
			parent = cur
			switch k := st.(type) {
			case string:
				pm, ok := parent.(map[string]any)
				if !ok {
					return
				}
				if cur, ok = pm[k]; !ok {
					return
				}
				set = func(v any) { pm[k] = v }
			case int:
				pl, ok := parent.([]any)
				if !ok || k < 0 || k >= len(pl) {
					return
				}
				cur = pl[k]
				set = func(v any) { pl[k] = v }
			}
		}
	}
	if cur != nil && set != nil {
		set(sensitive.Wrap(cur))
	}
}

// FileReferences returns the files deployer.yaml reads through ${file:PATH}
// (and ${secret:file:PATH}) references, anywhere in a component's config,
// its per-environment overrides or an environment's config: absolute paths
// (relative ones joined to Dir), sorted, each once. `--changed-since` counts
// a change of one of them as a change of the stack (docs/many-stacks.md).
func (c *Config) FileReferences() []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			for _, m := range refPattern.FindAllStringSubmatch(t, -1) {
				if m[2] != "file" || m[3] == "" {
					continue
				}
				p := m[3]
				if !filepath.IsAbs(p) {
					p = filepath.Join(c.Dir, p)
				}
				seen[filepath.Clean(p)] = true
			}
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	for _, e := range c.Environments {
		if e != nil {
			walk(e.Config)
		}
	}
	for _, s := range c.Services {
		if s == nil {
			continue
		}
		for _, comp := range s.Components {
			if comp == nil {
				continue
			}
			walk(comp.Config)
			for _, o := range comp.Environments {
				walk(o)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
