package config

import (
	"strconv"
	"time"
)

// ApplyEnv layers the DEPLOYER_* environment variables over the file (docs/configuration.md#environment-variables-and-flags:
// flags > DEPLOYER_* > deployer.yaml > defaults; the CLI applies flags after
// this). Empty variables are ignored. Handled:
//
//	DEPLOYER_STACK               stack
//	DEPLOYER_BACKEND_STATE       backend.state
//	DEPLOYER_BACKEND_LOCK        backend.lock
//	DEPLOYER_LOCK_TTL            backend.lock_ttl (Go duration)
//	DEPLOYER_HEARTBEAT_INTERVAL  backend.heartbeat_interval
//	DEPLOYER_STALE_AFTER         backend.stale_after
//	DEPLOYER_MAX_STATE_SIZE      backend.max_state_size (bytes, or 64MiB, 1GiB)
//	DEPLOYER_PARALLELISM         parallelism (a positive integer)
//	DEPLOYER_METRICS_EMF         metrics.emf (relative to the working directory)
//	DEPLOYER_MAX_CLOCK_SKEW      backend.max_clock_skew
//	DEPLOYER_MAX_CONFIG_VALUES   checked here; Load applies it (WithMaxValues)
//
// Bad values give a *ValidationError naming the variable; c is then
// partly updated and should not be used. WithBackends gives the schemes the
// backend URLs are checked against.
func ApplyEnv(c *Config, getenv func(string) string, opts ...Option) error {
	l := newLoader("", opts)
	if v := getenv("DEPLOYER_STACK"); v != "" {
		if ValidateName("stack", v) != nil {
			l.add(0, "DEPLOYER_STACK", "invalid stack name %q: %s", v, nameRule)
		}
		c.Stack = v
	}
	for _, u := range []struct {
		name, which string
		dst         *string
	}{
		{"DEPLOYER_BACKEND_STATE", "state", &c.Backend.State},
		{"DEPLOYER_BACKEND_LOCK", "lock", &c.Backend.Lock},
	} {
		if v := getenv(u.name); v != "" {
			if msg := l.checkBackendURL(u.which, v); msg != "" {
				l.add(0, u.name, "%s", msg)
			}
			*u.dst = v
		}
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{"DEPLOYER_LOCK_TTL", &c.Backend.LockTTL},
		{"DEPLOYER_HEARTBEAT_INTERVAL", &c.Backend.HeartbeatInterval},
		{"DEPLOYER_STALE_AFTER", &c.Backend.StaleAfter},
		{"DEPLOYER_MAX_CLOCK_SKEW", &c.Backend.MaxClockSkew},
	} {
		v := getenv(d.name)
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		switch {
		case err != nil:
			l.add(0, d.name, "invalid duration %q (use a number with a unit, e.g. 30s, 5m, 1h)", v)
		case dur <= 0:
			l.add(0, d.name, "duration %q must be positive (e.g. 30s, 5m, 1h)", v)
		default:
			*d.dst = dur
		}
	}
	if v := getenv("DEPLOYER_MAX_STATE_SIZE"); v != "" {
		n, err := ParseSize(v)
		if err != nil {
			l.add(0, "DEPLOYER_MAX_STATE_SIZE", "%v", err)
		} else {
			c.Backend.MaxStateSize = n
		}
	}
	if _, err := ParseMaxValues(getenv(MaxValuesVar)); err != nil {
		l.add(0, MaxValuesVar, "%v", err) // applied by Load (WithMaxValues)
	}
	if v := getenv("DEPLOYER_PARALLELISM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			l.add(0, "DEPLOYER_PARALLELISM", "want a positive whole number of components to apply at once (default %d), found %q", DefaultParallelism, v)
		} else {
			c.Parallelism = n
		}
	}
	if v := getenv("DEPLOYER_METRICS_EMF"); v != "" {
		c.Metrics.EMF = v
	}
	if len(l.probs) == 0 {
		l.checkTimings(&c.Backend, "backend")
	}
	if len(l.probs) > 0 {
		return &ValidationError{Problems: l.probs}
	}
	return nil
}
