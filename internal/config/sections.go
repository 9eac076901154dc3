package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

var backendKeys = []string{"state", "lock", "lock_ttl", "heartbeat_interval", "stale_after", "max_clock_skew", "sse", "kms_key_id", "path_style", "max_state_size"}

func (l *loader) backend(n *yaml.Node, b *Backend) {
	l.fields(n, "backend", backendKeys, func(k string, _, v *yaml.Node) {
		path := "backend." + k
		switch k {
		case "state", "lock":
			s, ok := l.str(v, path)
			if !ok || s == "" {
				return
			}
			if msg := l.checkBackendURL(k, s); msg != "" {
				l.add(v.Line, path, "%s", msg)
			}
			if k == "state" {
				b.State = s
			} else {
				b.Lock = s
			}
		case "lock_ttl":
			b.LockTTL = l.duration(v, path)
		case "heartbeat_interval":
			b.HeartbeatInterval = l.duration(v, path)
		case "stale_after":
			b.StaleAfter = l.duration(v, path)
		case "max_clock_skew":
			b.MaxClockSkew = l.duration(v, path)
		case "sse":
			s, _ := l.str(v, path)
			if s != "" && s != "AES256" && s != "aws:kms" {
				l.add(v.Line, path, "unknown server-side encryption %q (use AES256 or aws:kms)", s)
			}
			b.SSE = s
		case "kms_key_id":
			b.KMSKeyID, _ = l.str(v, path)
		case "path_style":
			if err := v.Decode(&b.PathStyle); err != nil {
				l.add(v.Line, path, "want true or false, found %s", kindName(v))
			}
		case "max_state_size":
			s, ok := l.str(v, path)
			if !ok || s == "" {
				return
			}
			n, err := ParseSize(s)
			if err != nil {
				l.add(v.Line, path, "%v", err)
			}
			b.MaxStateSize = n
		}
	})
}

// checkBackendURL returns "" or what is wrong with a backend.state/lock URL
// (docs/backends.md) and the fix. The schemes come from the backend registry
// (BackendSchemes); without them only the form of the URL is checked.
func (l *loader) checkBackendURL(which, raw string) string {
	known := l.backends.Lock
	if which == "state" {
		known = l.backends.State
	}
	fix := known.Suggestion()
	if raw == "none" {
		switch {
		case which == "state":
			return `the state backend cannot be "none": state must be stored somewhere (` + fix + ")"
		case known.Names != nil && !slices.Contains(known.Names, "none"):
			return fmt.Sprintf("unknown %s backend %q (%s)", which, raw, fix)
		}
		return ""
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		if which == "lock" && strings.EqualFold(raw, "none") {
			return fmt.Sprintf("%q is not a backend URL (write none in lower case)", raw)
		}
		return fmt.Sprintf("%q is not a backend URL (write file://%s for a local directory, or %s)", raw, raw, fix)
	}
	if known.Names != nil && (scheme == "none" || !slices.Contains(known.Names, scheme)) { // "none" is a URL, not a scheme
		return fmt.Sprintf("unknown %s backend scheme %q (%s)", which, scheme, fix)
	}
	if rest == "" || rest == "/" {
		if scheme == "file" {
			return fmt.Sprintf("%q names no directory (e.g. file://.deployer, relative to deployer.yaml)", raw)
		}
		return fmt.Sprintf("%q names no bucket, table or host (%s)", raw, fix)
	}
	return ""
}

// checkTimings checks the lease timings against each other (docs/locking.md#lifetime): a
// heartbeat must come well before the lease expires, and a lock must not be
// called stale before its holder was due to heartbeat.
func (l *loader) checkTimings(b *Backend, prefix string) {
	if b.HeartbeatInterval >= b.LockTTL {
		l.add(0, prefix+".heartbeat_interval", "%s must be shorter than lock_ttl %s (heartbeats extend the lease; use e.g. 30s with 1h)", b.HeartbeatInterval, b.LockTTL)
	}
	if b.StaleAfter <= b.HeartbeatInterval {
		l.add(0, prefix+".stale_after", "%s must be longer than heartbeat_interval %s (a lock is STALE after missing heartbeats; use e.g. 4x the interval)", b.StaleAfter, b.HeartbeatInterval)
	}
}

func (l *loader) environments(n *yaml.Node, c *Config) {
	l.entries(n, "environments", "environment names", func(name string, k, v *yaml.Node) {
		path := join("environments", name)
		if ValidateName("environment", name) != nil {
			l.add(k.Line, path, "invalid environment name %q: %s", name, nameRule)
		}
		env := &Environment{}
		l.fields(v, path, []string{"config"}, func(_ string, _, v *yaml.Node) {
			env.Config = l.configMap(v, path+".config")
		})
		c.Environments[name] = env
	})
}

// componentKeys are the keys every component may have; the kinds'
// sections (Kind.Sections) come on top.
var componentKeys = []string{"kind", "depends_on", "config", "environments", "secrets"}

func (l *loader) services(n *yaml.Node, c *Config) {
	l.entries(n, "services", "service names", func(svcName string, k, v *yaml.Node) {
		path := join("services", svcName)
		if ValidateName("service", svcName) != nil {
			l.add(k.Line, path, "invalid service name %q: %s", svcName, nameRule)
		}
		svc := &Service{Components: map[string]*Component{}}
		c.Services[svcName] = svc
		l.fields(v, path, []string{"components"}, func(_ string, _, v *yaml.Node) {
			l.entries(v, path+".components", "component names", func(name string, k, v *yaml.Node) {
				cp := path + ".components." + name
				if ValidateName("component", name) != nil {
					l.add(k.Line, cp, "invalid component name %q: %s", name, nameRule)
				}
				svc.Components[name] = l.component(v, cp, k.Line, svcName+"/"+name, c)
			})
		})
	})
}

// componentFields iterates the keys of a component: componentKeys and the
// sections of the kinds (WithKinds); any other key is refused. Without
// kinds every other key is taken as a section.
func (l *loader) componentFields(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	if l.kinds == nil {
		l.entries(n, path, strings.Join(componentKeys, ", "), fn)
		return
	}
	keys := slices.Clone(componentKeys)
	for _, name := range l.kindNames() {
		for _, s := range l.kinds[name].Sections {
			if !slices.Contains(keys, s) {
				keys = append(keys, s)
			}
		}
	}
	l.fields(n, path, keys, fn)
}

func (l *loader) component(n *yaml.Node, path string, line int, addr string, c *Config) *Component {
	comp := &Component{}
	pos := &compPos{path: path, line: line, envsLines: map[string]int{}, sections: map[string]int{}}
	l.pos[addr] = pos
	l.componentFields(n, path, func(key string, _, v *yaml.Node) {
		kp := path + "." + key
		switch key {
		case "kind":
			comp.Kind, _ = l.str(v, kp)
			pos.kindLine = v.Line
		case "depends_on":
			deps, lines := l.strList(v, kp)
			comp.DependsOn = deps
			for i := range deps {
				pos.deps = append(pos.deps, depPos{raw: deps[i], line: lines[i]})
			}
		case "config":
			comp.Config = l.configMap(v, kp)
		case "secrets":
			comp.Secrets, _ = l.strList(v, kp)
		case "environments":
			comp.Environments = map[string]map[string]any{}
			l.entries(v, kp, "environment names", func(env string, k, v *yaml.Node) {
				pos.envsLines[env] = k.Line
				comp.Environments[env] = l.configMap(v, kp+"."+env)
			})
		default: // a kind's own section, decoded by its engine (checkKind)
			pos.sections[key] = v.Line
			if comp.Sections == nil {
				comp.Sections = map[string]*yaml.Node{}
			}
			comp.Sections[key] = v
		}
	})
	return comp
}

// checkComponents runs the checks that need the whole file: kinds, commands,
// depends_on targets and override environments.
func (l *loader) checkComponents(c *Config) {
	envNames := slices.Sorted(maps.Keys(c.Environments))
	for svcName, svc := range c.Services {
		names := slices.Sorted(maps.Keys(svc.Components))
		for _, name := range names {
			comp := svc.Components[name]
			addr := svcName + "/" + name
			pos := l.pos[addr]
			l.checkKind(comp, pos)
			for env, line := range pos.envsLines {
				if _, ok := c.Environments[env]; !ok {
					l.add(line, pos.path+".environments."+env, "unknown environment %q%s", env, didYouMean(env, envNames, "add it under environments: or fix the name"))
				}
			}
			for i, d := range pos.deps {
				dp := fmt.Sprintf("%s.depends_on[%d]", pos.path, i)
				target, ok := normalizeDep(svcName, d.raw)
				switch {
				case !ok:
					l.add(d.line, dp, "%q is not a component: write NAME for a component of the same service or SERVICE/NAME", d.raw)
				case target == addr:
					l.add(d.line, dp, "a component cannot depend on itself (remove %q)", d.raw)
				case c.component(target) == nil:
					l.add(d.line, dp, "unknown component %q%s", d.raw, didYouMean(d.raw, depCandidates(c, svcName, d.raw), ""))
				}
			}
		}
	}
}

// normalizeDep turns a depends_on entry into a full address.
func normalizeDep(svc, dep string) (string, bool) {
	s, name, full := strings.Cut(dep, "/")
	if !full {
		s, name = svc, dep
	}
	if nameRE.MatchString(s) && nameRE.MatchString(name) {
		return s + "/" + name, true
	}
	return "", false
}

func depCandidates(c *Config, svc, raw string) []string {
	var out []string
	if strings.Contains(raw, "/") {
		for s, sv := range c.Services {
			for n := range sv.Components {
				out = append(out, s+"/"+n)
			}
		}
	} else if sv := c.Services[svc]; sv != nil {
		for n := range sv.Components {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (c *Config) component(addr string) *Component {
	s, n, _ := strings.Cut(addr, "/")
	if sv := c.Services[s]; sv != nil {
		return sv.Components[n]
	}
	return nil
}

// checkCycles reports each depends_on cycle once, starting at its smallest
// address.
func (l *loader) checkCycles(c *Config) {
	graph := map[string][]string{}
	for svc, sv := range c.Services {
		for n, comp := range sv.Components {
			for _, d := range comp.DependsOn {
				if t, ok := normalizeDep(svc, d); ok {
					graph[svc+"/"+n] = append(graph[svc+"/"+n], t)
				}
			}
		}
	}
	for _, cyc := range FindCycles(graph) {
		pos := l.pos[cyc[0]]
		l.add(pos.line, pos.path+".depends_on", "dependency cycle: %s (remove one of these depends_on entries)", strings.Join(cyc, " -> "))
	}
}

// FindCycles returns the dependency cycles of graph (node -> the nodes it
// depends on), each as a path that starts and ends at its smallest node, e.g.
// [a/x a/y a/x]. It is deterministic: nodes and edges are visited sorted.
func FindCycles(graph map[string][]string) [][]string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var cycles [][]string
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		deps := slices.Clone(graph[n])
		slices.Sort(deps)
		for _, d := range deps {
			switch color[d] {
			case white:
				visit(d)
			case grey:
				i := slices.Index(stack, d)
				cyc := slices.Clone(stack[i:])
				// rotate to start at the smallest node
				m := slices.Index(cyc, slices.Min(cyc))
				cyc = append(cyc[m:], cyc[:m]...)
				key := strings.Join(cyc, " ")
				if !seen[key] {
					seen[key] = true
					cycles = append(cycles, append(cyc, cyc[0]))
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range slices.Sorted(maps.Keys(graph)) {
		if color[n] == white {
			visit(n)
		}
	}
	return cycles
}
