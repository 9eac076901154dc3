package config

import (
	"net/url"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults of a shared resource (docs/guard.md; the shared-database stop
// design: lock TTL 60 s, 3 retries, 3 s quick-status timeout).
const (
	DefaultGuardLockTTL       = 60 * time.Second
	DefaultGuardMaxRetries    = 3
	DefaultGuardStatusTimeout = 3 * time.Second
	// MaxSharedNameLen keeps the guard's lock key "custom:guard-NAME" within
	// the name rule, so `deployer unlock --key guard-NAME` can break it.
	MaxSharedNameLen = 57
)

// Shared is one resource under `shared:` that several applications use
// (a database); `deployer guard stop` runs Stop only when every other
// sharer is down (docs/guard.md).
type Shared struct {
	Stop          string             // shell command, run with sh -c in Config.Dir
	LockTTL       time.Duration      // default 60s
	MaxRetries    int                // lock retries after the first try; default 3
	StatusTimeout time.Duration      // per status check; default 3s
	Sharers       map[string]*Sharer // by application name
}

// Sharer is one application using a shared resource.
type Sharer struct {
	// StatusURL answers HTTP 200 to a HEAD while the application is up.
	StatusURL string
}

var (
	sharedKeys = []string{"stop", "lock_ttl", "max_retries", "status_timeout", "sharers"}
	sharerKeys = []string{"status_url"}
)

func (l *loader) shared(n *yaml.Node, c *Config) {
	l.entries(n, "shared", "shared resource names", func(name string, k, v *yaml.Node) {
		path := join("shared", name)
		if ValidateName("shared resource", name) != nil {
			l.add(k.Line, path, "invalid shared resource name %q: %s", name, nameRule)
		} else if len(name) > MaxSharedNameLen {
			l.add(k.Line, path, "shared resource name %q is longer than %d characters (its lock key is guard-NAME; use a shorter name)", name, MaxSharedNameLen)
		}
		r := &Shared{Sharers: map[string]*Sharer{}}
		c.Shared[name] = r
		seen := map[string]bool{}
		l.fields(v, path, sharedKeys, func(key string, _, v *yaml.Node) {
			p := path + "." + key
			seen[key] = true
			switch key {
			case "stop":
				r.Stop, _ = l.str(v, p)
				if r.Stop == "" && v.Kind == yaml.ScalarNode {
					l.add(v.Line, p, "stop is empty (write the shell command that stops %s, run in the directory of deployer.yaml)", name)
				}
			case "lock_ttl":
				r.LockTTL = l.duration(v, p)
			case "status_timeout":
				r.StatusTimeout = l.duration(v, p)
			case "max_retries":
				s, ok := l.str(v, p)
				if !ok {
					return
				}
				n, err := strconv.Atoi(s)
				if err != nil || n < 0 || n > 20 {
					l.add(v.Line, p, "max_retries must be a whole number from 0 to 20, found %q (the lock is retried this many times before the stop is skipped)", s)
					return
				}
				r.MaxRetries = n
			case "sharers":
				l.entries(v, p, "application names", func(app string, k, v *yaml.Node) {
					ap := p + "." + app
					if ValidateName("application", app) != nil {
						l.add(k.Line, ap, "invalid application name %q: %s", app, nameRule)
					}
					s := &Sharer{}
					r.Sharers[app] = s
					l.fields(v, ap, sharerKeys, func(_ string, _, v *yaml.Node) {
						s.StatusURL, _ = l.str(v, ap+".status_url")
						if msg := checkStatusURL(s.StatusURL); msg != "" {
							l.add(v.Line, ap+".status_url", "%s", msg)
						}
					})
					if s.StatusURL == "" && !isNull(v) {
						l.add(k.Line, ap+".status_url", "status_url is required (the URL that answers HTTP 200 to a HEAD while %s is up)", app)
					} else if isNull(v) {
						l.add(k.Line, ap+".status_url", "status_url is required (write %s: {status_url: http://HOST/health})", app)
					}
				})
			}
		})
		if !seen["stop"] {
			l.add(k.Line, path+".stop", "stop is required (the shell command that stops %s, run in the directory of deployer.yaml)", name)
		}
		if len(r.Sharers) == 0 {
			l.add(k.Line, path+".sharers", "no sharers (list the applications that use %s, each with its status_url)", name)
		}
		if r.LockTTL == 0 {
			r.LockTTL = DefaultGuardLockTTL
		}
		if r.StatusTimeout == 0 {
			r.StatusTimeout = DefaultGuardStatusTimeout
		}
		if !seen["max_retries"] {
			r.MaxRetries = DefaultGuardMaxRetries
		}
	})
}

// checkStatusURL returns "" or what is wrong with a sharer's status_url.
func checkStatusURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "status_url " + strconv.Quote(raw) + " is not an http:// or https:// URL with a host (e.g. http://app-a.internal/health)"
	}
	return ""
}
