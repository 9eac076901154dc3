package pulumi

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// awsSchema is testdata/aws-schema.json: the properties of the pulumi-aws
// resources the AWS kinds register, as scripts/awsschema reads them from the
// pulumi-aws Go SDK (docs/kinds.md, "Checked against pulumi-aws").
type awsSchema struct {
	Source    string `json:"source"`
	Resources map[string]struct {
		Inputs   map[string]string `json:"inputs"`
		Required []string          `json:"required"`
		Secret   []string          `json:"secret"`
		Outputs  map[string]string `json:"outputs"`
	} `json:"resources"`
	Types map[string]struct {
		Fields   map[string]string `json:"fields"`
		Required []string          `json:"required"`
	} `json:"types"`
	JSON map[string]string `json:"json"`
}

func loadAWSSchema(t *testing.T) *awsSchema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "aws-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s awsSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// awsKinds are the kinds whose children are pulumi-aws resources.
var awsKinds = []string{"RDS", "ElastiCacheRedis", "MicroService"}

// containerRequired are the keys ECS needs in a container definition beyond
// what its API model marks required (nothing): RegisterTaskDefinition
// refuses a container without an image, and the service's load balancer
// names the container.
var containerRequired = []string{"name", "image"}

func secretValue(v any) map[string]any { return map[string]any{"secret": true, "value": v} }

// awsSchemaConfigs are configs of every AWS kind: each documented config key
// of docs/kinds.md set at least once (TestAWSSchemaConfigsCoverDocs), the
// defaults, the branches the kinds take (a password or a managed one, a
// final snapshot or not, one node or several, network settings in part), and
// versions written as YAML numbers (`version: 16`) or read back from a
// state's JSON (float64).
func awsSchemaConfigs() []Component {
	return []Component{
		{Address: "rds/defaults", Kind: "RDS", Config: map[string]any{"instance": map[string]any{"class": "db.t4g.medium"}}},
		{Address: "rds/all", Kind: "RDS", Config: map[string]any{
			"engine":     map[string]any{"type": "mysql", "version": "8.0.35"},
			"instance":   map[string]any{"class": "db.r6g.xlarge", "multiAZ": true, "storage": map[string]any{"allocatedGB": 100, "type": "gp3", "encrypted": true}},
			"identifier": "users-prod",
			"database":   map[string]any{"name": "users", "username": "admin", "password": secretValue("hunter2hunter2")},
			"network":    map[string]any{"subnetGroup": "db-subnets", "securityGroups": []any{"sg-1", "sg-2"}},
			"backup":     map[string]any{"retentionDays": 7},
			"deletion":   map[string]any{"protection": true, "skipFinalSnapshot": true},
		}},
		{Address: "rds/keyname", Kind: "RDS", Config: map[string]any{
			"instance": map[string]any{"class": "db.t4g.micro", "storage": map[string]any{"encrypted": false}},
			"database": map[string]any{"password": "plain-but-named-password"},
			"deletion": map[string]any{"protection": false, "skipFinalSnapshot": false},
		}},
		{Address: "rds/numbers", Kind: "RDS", Config: map[string]any{
			"engine":   map[string]any{"version": 16},
			"instance": map[string]any{"class": "db.t4g.micro"},
			"database": map[string]any{"name": "users"},
			"backup":   map[string]any{"retentionDays": 7.0},
		}},
		{Address: "cache/defaults", Kind: "ElastiCacheRedis", Config: map[string]any{"cluster": map[string]any{"nodeType": "cache.t4g.small"}}},
		{Address: "cache/all", Kind: "ElastiCacheRedis", Config: map[string]any{
			"engine":      map[string]any{"version": "7.1", "parameterGroup": "default.redis7"},
			"cluster":     map[string]any{"nodeType": "cache.r7g.large", "numNodes": 3, "multiAZ": true},
			"port":        6380,
			"id":          "users-cache",
			"description": "the users cache",
			"encryption":  map[string]any{"atRest": false, "inTransit": true},
			"network":     map[string]any{"subnetGroup": "cache-subnets", "securityGroups": []any{"sg-3"}},
		}},
		{Address: "cache/numbers", Kind: "ElastiCacheRedis", Config: map[string]any{
			"engine":  map[string]any{"version": 7.1},
			"cluster": map[string]any{"nodeType": "cache.t4g.small", "numNodes": 2.0},
			"port":    6379.0,
		}},
		{Address: "api/defaults", Kind: "MicroService", Config: map[string]any{"image": map[string]any{"repository": "registry.example.com/api"}}},
		{Address: "api/all", Kind: "MicroService", Config: map[string]any{
			"image":            map[string]any{"repository": "registry.example.com/api", "tag": "v1.2.3"},
			"resources":        map[string]any{"cpu": 1024, "memory": 2048},
			"port":             9090,
			"environment":      map[string]any{"LOG_LEVEL": "info", "WORKERS": 4, "DSN": secretValue("postgres://u:p@h/db")},
			"executionRoleArn": "arn:aws:iam::123456789012:role/exec",
			"taskRoleArn":      "arn:aws:iam::123456789012:role/task",
			"protocol":         "HTTPS",
			"healthCheck":      map[string]any{"path": "/ready"},
			"network":          map[string]any{"vpcId": "vpc-1", "subnets": []any{"subnet-1", "subnet-2"}, "securityGroups": []any{"sg-4"}},
			"cluster":          "prod",
			"scaling":          map[string]any{"minReplicas": 2, "maxReplicas": 10, "targetCPU": 55.5},
			"loadBalancer":     map[string]any{"url": "https://api.example.com"},
		}},
		{Address: "api/subnets", Kind: "MicroService", Config: map[string]any{
			"image":       map[string]any{"repository": "api"},
			"environment": map[string]any{"ONLY": "one"},
			"network":     map[string]any{"subnets": []any{"subnet-1"}},
			"scaling":     map[string]any{"minReplicas": 3, "maxReplicas": 1},
		}},
	}
}

// schemaMocks are the package's mocks that also keep the inputs as Pulumi
// sends them (secrets and numbers as they go over the wire).
type schemaMocks struct {
	mocks
	mu  sync.Mutex
	raw []rawRegistration
	// answered are the output properties the mocks answer with, by token.
	answered map[string]map[string]bool
}

type rawRegistration struct {
	token, name string
	inputs      resource.PropertyMap
}

func (m *schemaMocks) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	id, out, err := m.mocks.NewResource(args)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.raw = append(m.raw, rawRegistration{args.TypeToken, args.Name, args.Inputs})
	if m.answered[args.TypeToken] == nil {
		m.answered[args.TypeToken] = map[string]bool{}
	}
	for k := range out {
		m.answered[args.TypeToken][string(k)] = true
	}
	return id, out, err
}

// TestAWSKindsMatchProviderSchema: every input the AWS kinds send, for
// every config of awsSchemaConfigs, is an input property of the pulumi-aws
// resource (testdata/aws-schema.json) with the type it declares, nested
// objects included; every required input is sent; the inputs the provider
// keeps secret are sent as secrets; and the task definition's
// containerDefinitions is JSON the ECS API takes, with a name and an image.
func TestAWSKindsMatchProviderSchema(t *testing.T) {
	s := loadAWSSchema(t)
	m := &schemaMocks{answered: map[string]map[string]bool{}}
	comps := awsSchemaConfigs()
	if err := pulumi.RunErr(Program(comps, nil, nil), pulumi.WithMocks("user-platform", "production", m)); err != nil {
		t.Fatalf("program: %v", err)
	}
	seen := map[string]int{}
	for _, r := range m.raw {
		if strings.HasPrefix(r.token, ComponentType) {
			continue
		}
		seen[r.token]++
		res, ok := s.Resources[r.token]
		if !ok {
			t.Errorf("%s %s: %s is not in testdata/aws-schema.json (regenerate it: docs/kinds.md, \"Checked against pulumi-aws\")", r.token, r.name, r.token)
			continue
		}
		c := &schemaCheck{t: t, s: s, where: r.token + " " + r.name}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range r.inputs {
				if !yield(string(k)) {
					return
				}
			}
		}) {
			v := r.inputs[resource.PropertyKey(k)]
			typ, ok := res.Inputs[k]
			if !ok {
				t.Errorf("%s: input %q is not an input of %s (%s)", c.where, k, r.token, s.Source)
				continue
			}
			plain, secret := plainValue(v)
			if slices.Contains(res.Secret, k) && !secret {
				t.Errorf("%s: input %q is not sent as a secret; the provider keeps it secret", c.where, k)
			}
			c.check(k, typ, plain)
			if jt, ok := s.JSON[r.token+"."+k]; ok {
				c.checkJSON(k, jt, plain)
			}
		}
		for _, k := range res.Required {
			if _, ok := r.inputs[resource.PropertyKey(k)]; !ok {
				t.Errorf("%s: required input %q is not sent", c.where, k)
			}
		}
	}
	for _, name := range awsKinds {
		kind, _ := Lookup(name)
		for _, tok := range kind.Tokens {
			if seen[tok] == 0 {
				t.Errorf("kind %s: no %s was registered by any config", name, tok)
			}
		}
	}
	// The mocks answer like the provider: with output properties it has.
	for tok, props := range m.answered {
		res, ok := s.Resources[tok]
		if !ok {
			continue
		}
		for _, p := range slices.Sorted(func(yield func(string) bool) {
			for p := range props {
				if !yield(p) {
					return
				}
			}
		}) {
			if _, ok := res.Outputs[p]; !ok {
				t.Errorf("the test mocks answer %s with %q, which is not an output of it", tok, p)
			}
		}
	}
}

// plainValue returns v as a plain value (string, float64, bool, []any,
// map[string]any, nil for unknown) and whether it is or holds a secret.
func plainValue(v resource.PropertyValue) (any, bool) {
	switch {
	case v.IsSecret():
		p, _ := plainValue(v.SecretValue().Element)
		return p, true
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return unknown{}, o.Secret
		}
		p, s := plainValue(o.Element)
		return p, s || o.Secret
	case v.IsComputed():
		return unknown{}, false
	case v.IsArray():
		out, secret := []any{}, false
		for _, e := range v.ArrayValue() {
			p, s := plainValue(e)
			out, secret = append(out, p), secret || s
		}
		return out, secret
	case v.IsObject():
		out, secret := map[string]any{}, false
		for k, e := range v.ObjectValue() {
			p, s := plainValue(e)
			out[string(k)], secret = p, secret || s
		}
		return out, secret
	}
	return v.V, false
}

// unknown is a value not known before the deployment (another resource's output).
type unknown struct{}

type schemaCheck struct {
	t     *testing.T
	s     *awsSchema
	where string
}

var genericType = regexp.MustCompile(`^(array|map)<(.*)>$`)

// check reports where v, at path, is not of the schema type typ.
func (c *schemaCheck) check(path, typ string, v any) {
	c.t.Helper()
	if _, ok := v.(unknown); ok {
		return
	}
	bad := func() {
		c.t.Helper()
		c.t.Errorf("%s: input %s = %#v, want %s", c.where, path, v, typ)
	}
	if g := genericType.FindStringSubmatch(typ); g != nil {
		switch g[1] {
		case "array":
			a, ok := v.([]any)
			if !ok {
				bad()
				return
			}
			for i, e := range a {
				c.check(fmt.Sprintf("%s[%d]", path, i), g[2], e)
			}
		case "map":
			o, ok := v.(map[string]any)
			if !ok {
				bad()
				return
			}
			for k, e := range o {
				c.check(path+"."+k, g[2], e)
			}
		}
		return
	}
	switch typ {
	case "any":
	case "string":
		if _, ok := v.(string); !ok {
			bad()
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad()
		}
	case "number":
		if _, ok := v.(float64); !ok {
			bad()
		}
	case "integer":
		// Pulumi sends every number as a float64; an integer is a whole one.
		if n, ok := v.(float64); !ok || n != math.Trunc(n) {
			bad()
		}
	default:
		obj, ok := c.s.Types[typ]
		if !ok {
			c.t.Fatalf("testdata/aws-schema.json has no type %s", typ)
		}
		o, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range o {
				if !yield(k) {
					return
				}
			}
		}) {
			ft, ok := obj.Fields[k]
			if !ok {
				c.t.Errorf("%s: input %s.%s is not a field of %s", c.where, path, k, typ)
				continue
			}
			c.check(path+"."+k, ft, o[k])
		}
		for _, k := range obj.Required {
			if _, ok := o[k]; !ok {
				c.t.Errorf("%s: input %s lacks %s, required in %s", c.where, path, k, typ)
			}
		}
	}
}

// checkJSON checks the JSON document the string v holds against typ.
func (c *schemaCheck) checkJSON(path, typ string, v any) {
	c.t.Helper()
	str, ok := v.(string)
	if !ok {
		return // check reported it
	}
	var doc any
	if err := json.Unmarshal([]byte(str), &doc); err != nil {
		c.t.Errorf("%s: input %s is not JSON: %v\n%s", c.where, path, err, str)
		return
	}
	c.check(path+" (JSON)", typ, doc)
	if path != "containerDefinitions" {
		return
	}
	defs, _ := doc.([]any)
	if len(defs) == 0 {
		c.t.Errorf("%s: containerDefinitions holds no container: %s", c.where, str)
	}
	for i, d := range defs {
		def, _ := d.(map[string]any)
		for _, k := range containerRequired {
			if s, _ := def[k].(string); s == "" {
				c.t.Errorf("%s: containerDefinitions[%d] has no %s: %s", c.where, i, k, str)
			}
		}
	}
}

// TestAWSKindsReadProviderOutputs: every output property the AWS kinds
// read from a child (X.Out("prop") in kinds_aws.go, and the kinds'
// actual_state fields) is an output of that child's pulumi-aws resource, and
// one rendered as a string number (asString) is a number.
func TestAWSKindsReadProviderOutputs(t *testing.T) {
	s := loadAWSSchema(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "kinds_aws.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// Per Register function: the child variables' tokens and the roles of Children.
	type fn struct{ vars, roles map[string]string }
	fns := map[string]fn{}
	var decls []*ast.FuncDecl         // the functions, Register and helpers
	registerOf := map[string]string{} // kind -> Register function
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if fd.Name.Name == "init" {
			ast.Inspect(fd, func(n ast.Node) bool {
				if cl, ok := n.(*ast.CompositeLit); ok && fmt.Sprint(cl.Type) == "Kind" {
					var kind, reg string
					for _, e := range cl.Elts {
						kv, _ := e.(*ast.KeyValueExpr)
						if kv == nil {
							continue
						}
						switch fmt.Sprint(kv.Key) {
						case "Name":
							kind = unquote(t, kv.Value)
						case "Register":
							reg = fmt.Sprint(kv.Value)
						}
					}
					registerOf[kind] = reg
				}
				return true
			})
			continue
		}
		info := fn{vars: map[string]string{}, roles: map[string]string{}}
		ast.Inspect(fd, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if call, ok := n.Rhs[0].(*ast.CallExpr); ok && len(n.Rhs) == 1 && callName(call) == "child" {
					info.vars[fmt.Sprint(n.Lhs[0])] = unquote(t, call.Args[0])
				}
			case *ast.KeyValueExpr:
				if fmt.Sprint(n.Key) == "Children" {
					for _, e := range n.Value.(*ast.CompositeLit).Elts {
						kv := e.(*ast.KeyValueExpr)
						info.roles[unquote(t, kv.Key)] = fmt.Sprint(kv.Value)
					}
				}
			}
			return true
		})
		fns[fd.Name.Name] = info
		decls = append(decls, fd)
	}
	varsOf := map[string]map[string]string{}
	for name, info := range fns {
		varsOf[name] = info.vars
	}
	followHelpers(t, decls, varsOf)
	for _, fd := range decls {
		info := fns[fd.Name.Name]
		checkOut := func(call *ast.CallExpr, numeric bool) {
			t.Helper()
			pos := fset.Position(call.Pos())
			recv, ok := call.Fun.(*ast.SelectorExpr).X.(*ast.Ident)
			if !ok || len(call.Args) != 1 {
				t.Errorf("%s: %s reads an output the test cannot follow (write X.Out(\"prop\") on a child variable)", pos, fd.Name.Name)
				return
			}
			tok, ok := info.vars[recv.Name]
			if !ok {
				t.Errorf("%s: %s.Out: %s is not a child registered in %s", pos, recv.Name, recv.Name, fd.Name.Name)
				return
			}
			prop := unquote(t, call.Args[0])
			typ, ok := s.Resources[tok].Outputs[prop]
			switch {
			case !ok:
				t.Errorf("%s: %s reads output %q of %s, which has no such output (%s)", pos, fd.Name.Name, prop, tok, s.Source)
			case numeric && typ != "integer" && typ != "number":
				t.Errorf("%s: %s renders output %q of %s as a number, but it is a %s", pos, fd.Name.Name, prop, tok, typ)
			}
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if callName(call) == "asString" {
				if inner, ok := call.Args[0].(*ast.CallExpr); ok && callName(inner) == "Out" {
					checkOut(inner, true)
					return false
				}
			}
			if callName(call) == "Out" {
				checkOut(call, false)
			}
			return true
		})
	}
	for _, name := range awsKinds {
		kind, _ := Lookup(name)
		info, ok := fns[registerOf[name]]
		if !ok {
			t.Fatalf("kind %s: its Register function is not found in kinds_aws.go", name)
		}
		for _, tok := range kind.Tokens {
			if _, ok := s.Resources[tok]; !ok {
				t.Errorf("kind %s: %s is not in testdata/aws-schema.json (regenerate it: docs/kinds.md, \"Checked against pulumi-aws\")", name, tok)
			}
		}
		for _, sf := range kind.Actual {
			tok := info.vars[info.roles[sf.Role]]
			if tok == "" {
				t.Errorf("kind %s: actual_state %s reads role %q, not a child of the kind", name, sf.Key, sf.Role)
				continue
			}
			if _, ok := s.Resources[tok].Outputs[sf.Prop]; !ok && sf.Prop != "id" {
				t.Errorf("kind %s: actual_state %s reads output %q of %s, which has no such output (%s)", name, sf.Key, sf.Prop, tok, s.Source)
			}
		}
	}
}

func callName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func unquote(t *testing.T, e ast.Expr) string {
	t.Helper()
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Fatalf("kinds_aws.go: %s is not a string literal (the test reads tokens, roles and properties as literals)", e)
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAWSSchemaConfigsCoverDocs: awsSchemaConfigs sets every config key
// docs/kinds.md documents for the AWS kinds, so the schema test sends every
// input a user can make deployer send.
func TestAWSSchemaConfigsCoverDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "kinds.md"))
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]map[string]bool{} // kind -> config paths set
	for _, c := range awsSchemaConfigs() {
		if set[c.Kind] == nil {
			set[c.Kind] = map[string]bool{}
		}
		var walk func(prefix string, m map[string]any)
		walk = func(prefix string, m map[string]any) {
			for k, v := range m {
				set[c.Kind][prefix+k] = true
				if sub, ok := v.(map[string]any); ok && !(sub["secret"] == true) {
					walk(prefix+k+".", sub)
				}
			}
		}
		walk("", c.Config)
	}
	section := ""
	documented := 0
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.Fields(h)[0]
			continue
		}
		if set[section] == nil || !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			documented++
			if !set[section][m[1]] {
				t.Errorf("docs/kinds.md documents %s config %s; awsSchemaConfigs never sets it", section, m[1])
			}
		}
	}
	if documented < 30 {
		t.Fatalf("read %d config keys of the AWS kinds from docs/kinds.md; its tables changed shape", documented)
	}
}

// TestAWSKindsRefuseMistypedConfig: a config value that cannot be the type
// of the pulumi-aws property it sets is refused before anything is sent,
// naming the component and the path.
func TestAWSKindsRefuseMistypedConfig(t *testing.T) {
	rds := func(extra map[string]any) map[string]any {
		return merge(map[string]any{"instance": map[string]any{"class": "db.t4g.micro"}}, extra)
	}
	cases := []struct {
		comp Component
		want string
	}{
		{Component{Address: "a/db", Kind: "RDS", Config: rds(map[string]any{"deletion": map[string]any{"protection": "yes"}})},
			"a/db: config deletion.protection: yes is not true or false"},
		{Component{Address: "a/db", Kind: "RDS", Config: rds(map[string]any{"backup": map[string]any{"retentionDays": "7"}})},
			"a/db: config backup.retentionDays: 7 is not a number"},
		{Component{Address: "a/db", Kind: "RDS", Config: rds(map[string]any{"backup": map[string]any{"retentionDays": 7.5}})},
			"a/db: config backup.retentionDays: 7.5 is not a whole number"},
		{Component{Address: "a/db", Kind: "RDS", Config: rds(map[string]any{"engine": map[string]any{"version": []any{"16"}}})},
			"a/db: config engine.version: [16] is not a string"},
		{Component{Address: "a/cache", Kind: "ElastiCacheRedis", Config: map[string]any{
			"cluster": map[string]any{"nodeType": "cache.t4g.small", "multiAZ": "true"}}},
			"a/cache: config cluster.multiAZ: true is not true or false"},
		{Component{Address: "a/api", Kind: "MicroService", Config: map[string]any{
			"image": map[string]any{"repository": "api"}, "network": map[string]any{"vpcId": false}}},
			"a/api: config network.vpcId: false is not a string"},
	}
	for _, tc := range cases {
		err := pulumiRunErr([]Component{tc.comp})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error = %v, want it to contain %q", tc.comp.Config, err, tc.want)
		}
	}
}

// followHelpers gives the child variables of kinds_aws.go's helpers their
// tokens: a helper that returns r.child(TOKEN, ...) gives TOKEN to its
// caller's variable, a helper's named results give theirs, and a caller's
// child variables passed as arguments name the helper's parameters.
func followHelpers(t *testing.T, decls []*ast.FuncDecl, varsOf map[string]map[string]string) {
	t.Helper()
	declOf, returns := map[string]*ast.FuncDecl{}, map[string]string{}
	for _, fd := range decls {
		declOf[fd.Name.Name] = fd
		ast.Inspect(fd, func(n ast.Node) bool {
			if rs, ok := n.(*ast.ReturnStmt); ok && len(rs.Results) > 0 {
				if call, ok := rs.Results[0].(*ast.CallExpr); ok && callName(call) == "child" {
					returns[fd.Name.Name] = unquote(t, call.Args[0])
				}
			}
			return true
		})
	}
	for range 3 { // helpers of helpers, up to three deep
		for _, fd := range decls {
			vars := varsOf[fd.Name.Name]
			ast.Inspect(fd, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					call, ok := n.Rhs[0].(*ast.CallExpr)
					if !ok || len(n.Rhs) != 1 {
						return true
					}
					if tok, ok := returns[callName(call)]; ok {
						vars[fmt.Sprint(n.Lhs[0])] = tok
					}
					if cd := declOf[callName(call)]; cd != nil {
						for i, res := range fieldNames(cd.Type.Results) {
							if tok, ok := varsOf[cd.Name.Name][res]; ok && i < len(n.Lhs) {
								vars[fmt.Sprint(n.Lhs[i])] = tok
							}
						}
					}
				case *ast.CallExpr:
					cd := declOf[callName(n)]
					if cd == nil {
						return true
					}
					for i, param := range fieldNames(cd.Type.Params) {
						if i >= len(n.Args) {
							break
						}
						if id, ok := n.Args[i].(*ast.Ident); ok {
							if tok, ok := vars[id.Name]; ok {
								varsOf[cd.Name.Name][param] = tok
							}
						}
					}
				}
				return true
			})
		}
	}
}

// fieldNames are the names of a parameter or result list, in order.
func fieldNames(fl *ast.FieldList) []string {
	var out []string
	if fl != nil {
		for _, field := range fl.List {
			for _, n := range field.Names {
				out = append(out, n.Name)
			}
		}
	}
	return out
}
