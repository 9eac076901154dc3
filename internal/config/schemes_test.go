package config

import "testing"

// testBackends stands for the backend registry's list (internal/backends
// tests that config validation with the real list gives these messages).
// testKinds is what the engine registry lists (internal/engines.Kinds, whose
// test checks config against the real list).
var testKinds = []Kind{
	{Name: "Command", Engine: "Command", Sections: []string{"command"},
		Requires: []Requirement{{Path: "command.create", Why: "the shell command that creates it, run in the directory of deployer.yaml"}}},
	{Name: "ElastiCacheRedis", Engine: "Pulumi"}, {Name: "MicroService", Engine: "Pulumi"}, {Name: "PulumiResource", Engine: "Pulumi"},
	{Name: "RDS", Engine: "Pulumi"}, {Name: "StackReference", Engine: "StackReference"},
}

var testBackends = BackendSchemes{
	State: SchemeList{Names: []string{"file", "s3", "postgres", "postgresql"},
		Forms: []string{"file://DIR", "s3://BUCKET?region=REGION", "postgres://USER@HOST/DB"}},
	Lock: SchemeList{Names: []string{"file", "dynamodb", "s3", "redis", "rediss", "postgres", "postgresql", "none"},
		Forms: []string{"file://DIR", "dynamodb://TABLE?region=REGION", "s3://BUCKET?region=REGION", "redis://HOST:6379/0", "postgres://USER@HOST/DB", "none"}},
}

func TestWithoutSchemesOnlyTheFormIsChecked(t *testing.T) {
	if _, err := Parse([]byte("backend:\n  lock: etcd://host:2379\n"), "deployer.yaml"); err != nil {
		t.Errorf("without schemes an unknown scheme is left to the registry: %v", err)
	}
	_, err := Parse([]byte("backend:\n  state: .deployer\n"), "deployer.yaml")
	want := `deployer.yaml:2: backend.state: ".deployer" is not a backend URL (write file://.deployer for a local directory, or see docs/backends.md)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestLockNoneNeedsARegistryLine(t *testing.T) {
	s := testBackends
	s.Lock = SchemeList{Names: []string{"file"}, Forms: []string{"file://DIR"}}
	_, err := Parse([]byte("backend:\n  lock: none\n"), "deployer.yaml", WithBackends(s))
	want := `deployer.yaml:2: backend.lock: unknown lock backend "none" (use file://DIR)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
