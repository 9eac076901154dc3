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
	Stop          string             `yaml:"stop"`                        // shell command, run with sh -c in Config.Dir
	LockTTL       time.Duration      `yaml:"lock_ttl"`                    // default 60s
	MaxRetries    int                `yaml:"max_retries" check:"retries"` // lock retries after the first try; default 3
	StatusTimeout time.Duration      `yaml:"status_timeout"`              // per status check; default 3s
	Sharers       map[string]*Sharer `yaml:"sharers" names:"application"` // by application name
}

// Sharer is one application using a shared resource.
type Sharer struct {
	// StatusURL answers HTTP 200 to a HEAD while the application is up.
	StatusURL string `yaml:"status_url" check:"status-url"`
}

// sharedKind is the noun of a shared resource's name in errors.
const sharedKind = "shared resource"

// checkShared checks what decoding each shared resource cannot (what must
// be there) and fills its defaults.
func (l *loader) checkShared(c *Config) {
	for name, r := range c.Shared {
		path := join("shared", name)
		line := l.keyLine(path)
		if stop, ok := l.at[path+".stop"]; !ok {
			l.add(line, path+".stop", "stop is required (the shell command that stops %s, run in the directory of deployer.yaml)", name)
		} else if r.Stop == "" && stop.val.Kind == yaml.ScalarNode {
			l.add(stop.val.Line, path+".stop", "stop is empty (write the shell command that stops %s, run in the directory of deployer.yaml)", name)
		}
		for app, s := range r.Sharers {
			ap := path + ".sharers." + app
			switch a := l.at[ap]; {
			case isNull(a.val):
				l.add(a.key.Line, ap+".status_url", "status_url is required (write %s: {status_url: http://HOST/health})", app)
			case s.StatusURL == "":
				l.add(a.key.Line, ap+".status_url", "status_url is required (the URL that answers HTTP 200 to a HEAD while %s is up)", app)
			}
		}
		if len(r.Sharers) == 0 {
			l.add(line, path+".sharers", "no sharers (list the applications that use %s, each with its status_url)", name)
			r.Sharers = map[string]*Sharer{}
		}
		if r.LockTTL == 0 {
			r.LockTTL = DefaultGuardLockTTL
		}
		if r.StatusTimeout == 0 {
			r.StatusTimeout = DefaultGuardStatusTimeout
		}
		if _, set := l.at[path+".max_retries"]; !set {
			r.MaxRetries = DefaultGuardMaxRetries
		}
	}
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
