package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/dag"
)

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

// compPos is where a component's parts are, for the checks that need the
// whole file.
type compPos struct {
	path     string // services.S.components.C
	line     int    // of its name
	kindLine int
	sections map[string]int // line of each of the kind's own sections ("command")
}

func (l *loader) compPos(svc, name string, comp *Component) *compPos {
	path := "services." + svc + ".components." + name
	p := &compPos{path: path, line: l.keyLine(path), kindLine: l.line(path + ".kind"), sections: map[string]int{}}
	for s, n := range comp.Sections {
		p.sections[s] = n.Line
	}
	return p
}

// checkComponents runs the checks that need the whole file: kinds, commands,
// depends_on targets and override environments.
func (l *loader) checkComponents(c *Config) {
	envNames := slices.Sorted(maps.Keys(c.Environments))
	for svcName, svc := range c.Services {
		names := slices.Sorted(maps.Keys(svc.Components))
		for _, name := range names {
			comp := svc.Components[name]
			addr := Address(svcName, name)
			pos := l.compPos(svcName, name, comp)
			l.checkKind(comp, pos)
			for env := range comp.Environments {
				if _, ok := c.Environments[env]; !ok {
					p := pos.path + ".environments." + env
					l.add(l.keyLine(p), p, "unknown environment %q%s", env, didYouMean(env, envNames, "add it under environments: or fix the name"))
				}
			}
			for i, d := range comp.DependsOn {
				dp := fmt.Sprintf("%s.depends_on[%d]", pos.path, i)
				line := l.line(dp)
				target, ok := normalizeDep(svcName, d)
				switch {
				case !ok:
					l.add(line, dp, "%q is not a component: write NAME for a component of the same service or SERVICE/NAME", d)
				case target == addr:
					l.add(line, dp, "a component cannot depend on itself (remove %q)", d)
				case c.component(target) == nil:
					l.add(line, dp, "unknown component %q%s", d, didYouMean(d, depCandidates(c, svcName, d), ""))
				}
			}
		}
	}
}

func depCandidates(c *Config, svc, raw string) []string {
	var out []string
	if strings.Contains(raw, "/") {
		for s, sv := range c.Services {
			for n := range sv.Components {
				out = append(out, Address(s, n))
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
	s, n := SplitAddress(addr)
	if sv := c.Services[s]; sv != nil {
		return sv.Components[n]
	}
	return nil
}

// CycleHint is what a depends_on cycle's error says to do.
const CycleHint = "remove one of these depends_on entries"

// checkCycles reports each depends_on cycle once, starting at its smallest
// address.
func (l *loader) checkCycles(c *Config) {
	graph := map[string][]string{}
	for svc, sv := range c.Services {
		for n, comp := range sv.Components {
			a := Address(svc, n)
			for _, d := range comp.DependsOn {
				if t, ok := normalizeDep(svc, d); ok {
					graph[a] = append(graph[a], t)
				}
			}
		}
	}
	for _, cyc := range dag.FindCycles(graph) {
		svc, name := SplitAddress(cyc[0])
		path := "services." + svc + ".components." + name
		l.add(l.keyLine(path), path+".depends_on", "%s", &dag.CycleError{Cycle: cyc, Hint: CycleHint})
	}
}
