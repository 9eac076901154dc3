package pulumi

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// registration is one resource the program registered, as a golden file shows it.
type registration struct {
	Type      string         `json:"type"`
	Name      string         `json:"name"`
	Parent    string         `json:"parent,omitempty"`
	DependsOn []string       `json:"depends_on,omitempty"`
	Read      bool           `json:"read,omitempty"`
	ID        string         `json:"id,omitempty"`
	Inputs    map[string]any `json:"inputs"`
	// Secret lists the inputs Pulumi holds as secrets (encrypted in its
	// backend), sorted; not in the golden files.
	Secret []string `json:"-"`
}

// mocks plays the cloud: it records registrations and answers with the
// inputs plus the computed outputs a provider would return.
type mocks struct {
	mu   sync.Mutex
	regs []registration
}

func (m *mocks) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	return resource.PropertyMap{}, nil
}

func (m *mocks) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	in := args.Inputs.Mappable()
	reg := registration{Type: args.TypeToken, Name: args.Name, Inputs: in}
	for k, v := range args.Inputs {
		if v.ContainsSecrets() {
			reg.Secret = append(reg.Secret, string(k))
		}
	}
	sort.Strings(reg.Secret)
	if rpc := args.RegisterRPC; rpc != nil {
		reg.Parent, reg.DependsOn = rpc.GetParent(), rpc.GetDependencies()
		sort.Strings(reg.DependsOn)
	}
	if rpc := args.ReadRPC; rpc != nil {
		reg.Parent, reg.Read, reg.ID = rpc.GetParent(), true, rpc.GetId()
	}
	m.mu.Lock()
	m.regs = append(m.regs, reg)
	m.mu.Unlock()

	out := map[string]any{}
	for k, v := range in {
		out[k] = v
	}
	id := args.Name + "-id"
	arn := func(svc, what string) string {
		return fmt.Sprintf("arn:aws:%s:us-east-1:123456789012:%s/%s", svc, what, args.Name)
	}
	switch args.TypeToken {
	case "aws:rds/instance:Instance":
		id = "user-db-prod"
		out["address"] = args.Name + ".abc123.us-east-1.rds.amazonaws.com"
		out["endpoint"] = args.Name + ".abc123.us-east-1.rds.amazonaws.com:5432"
		out["port"] = 5432
		out["arn"] = arn("rds", "db")
		out["status"] = "available"
		out["engineVersionActual"] = in["engineVersion"]
	case "aws:elasticache/replicationGroup:ReplicationGroup":
		id = "user-cache-prod"
		out["primaryEndpointAddress"] = "master." + args.Name + ".abc123.cache.amazonaws.com"
		out["readerEndpointAddress"] = "replica." + args.Name + ".abc123.cache.amazonaws.com"
		out["engineVersionActual"] = "7.0.7"
	case "aws:ecs/taskDefinition:TaskDefinition":
		out["arn"] = arn("ecs", "task-definition") + ":15"
		out["revision"] = 15
	case "aws:lb/targetGroup:TargetGroup":
		out["arn"] = arn("elasticloadbalancing", "targetgroup")
	case "aws:ecs/service:Service":
		id = arn("ecs", "service")
		out["name"] = args.Name
	case "aws:appautoscaling/policy:Policy":
		out["arn"] = arn("autoscaling", "policy")
	case "random:index/randomPet:RandomPet":
		id = "happy-pet"
	}
	if strings.HasPrefix(args.TypeToken, ComponentType) {
		id = ""
	}
	return id, resource.NewPropertyMapFromMap(out), nil
}

// run declares comps under mocks and returns what was registered and the
// value every component exports (the outputs written into state).
func run(t *testing.T, m *mocks, project, stack string, comps []Component, external map[string]map[string]any) ([]registration, map[string]any) {
	t.Helper()
	done := newFinished()
	if err := pulumi.RunErr(Program(comps, external, done), pulumi.WithMocks(project, stack, m)); err != nil {
		t.Fatalf("program: %v", err)
	}
	values := done.snapshot()
	// Stack outputs reach deployer as JSON, as they do from `pulumi stack output`.
	b, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	values = map[string]any{}
	if err := json.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	regs := append([]registration(nil), m.regs...)
	sort.Slice(regs, func(i, j int) bool {
		if regs[i].Type != regs[j].Type {
			return regs[i].Type < regs[j].Type
		}
		return regs[i].Name < regs[j].Name
	})
	return regs, values
}

// golden compares got (as indented JSON) with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -run %s -update to create it): %v", t.Name(), err)
	}
	if d := cmp.Diff(string(want), string(b)); d != "" {
		t.Errorf("%s differs from what the program registered (-want +got); run with -update if the change is intended:\n%s", path, d)
	}
}

func pulumiRunErr(comps []Component) error {
	return pulumi.RunErr(Program(comps, nil, nil), pulumi.WithMocks("p", "s", &mocks{}))
}
