package plan

import (
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

var fixedNow = func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) }

// comp builds a resolved component; deps are full addresses.
func comp(addr, kind string, cfg map[string]any, deps ...string) *config.ResolvedComponent {
	svc, name, _ := strings.Cut(addr, "/")
	c := &config.ResolvedComponent{Address: addr, Service: svc, Name: name, Kind: kind, Config: cfg, DependsOn: deps}
	if kind == "Command" {
		c.Settings = map[string]map[string]any{"command": {"create": "./create.sh", "delete": "./delete.sh"}}
	}
	return c
}

func desired(cs ...*config.ResolvedComponent) *config.Resolved {
	r := &config.Resolved{Stack: "shop", Env: "prod", Components: map[string]*config.ResolvedComponent{}}
	for _, c := range cs {
		r.Components[c.Address] = c
	}
	return r
}

// res builds a state resource; deps are full addresses.
func res(kind string, cfg map[string]any, deps ...string) *statestore.Resource {
	return &statestore.Resource{Kind: kind, Status: "ready", DesiredConfig: cfg, Dependencies: deps}
}

func state(rs map[string]*statestore.Resource) *statestore.State {
	return &statestore.State{Serial: 7, Lineage: "8d6f4c1e-0000-4000-8000-000000000001", Resources: rs}
}

func addrs(steps []Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, string(s.Action)+" "+s.Address)
	}
	return strings.Join(out, ", ")
}
