// Command awsschema writes the input and output properties of the pulumi-aws
// resources deployer's AWS kinds register (internal/engine/pulumi) into
// internal/engine/pulumi/testdata/aws-schema.json, read from the source of
// the pulumi-aws Go SDK: the TestAWSKindsMatchProviderSchema test checks
// every input deployer sends and every output it reads against it
// (docs/kinds.md, "Checked against pulumi-aws").
//
// It is its own module so that the product's go.mod does not grow and CI
// never builds it. From the repository root:
//
//	cd scripts/awsschema && go run . -version v6.83.4
//
// It downloads the SDK with `go mod download` (the module proxy, checked
// against the checksum database), collects every "aws:…" type token
// written in internal/engine/pulumi/*.go, and for each reads, with go/ast:
//   - inputs: the `pulumi:"…"` fields of the plain args struct (instanceArgs),
//     required when New… refuses a nil value for them;
//   - outputs: the `pulumi:"…"` fields of the resource struct (Instance), typed
//     from the plain state struct (instanceState);
//   - secret: the properties New… marks as AdditionalSecretOutputs;
//   - types: every object type reachable from those properties, with its
//     fields; a non-pointer scalar or object field is required. (The SDK does
//     not tell a required list from an optional one inside an object type.)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const (
	module    = "github.com/pulumi/pulumi-aws/sdk/v6"
	ecsModule = "github.com/aws/aws-sdk-go-v2/service/ecs"
)

// Schema is the file written; internal/engine/pulumi/awsschema_test.go reads it.
type Schema struct {
	// Source is the module and version the schema was read from.
	Source    string               `json:"source"`
	Generator string               `json:"generator"`
	Resources map[string]*Resource `json:"resources"`
	// Types are object types by "module.GoName" ("ecs.ServiceLoadBalancer");
	// "ecsapi.Name" are the ECS API's shapes (the JSON of a task
	// definition's containerDefinitions), read from JSONSource.
	Types map[string]*Object `json:"types"`
	// JSON gives the type of the JSON document a string property holds:
	// "token.property" -> type.
	JSON       map[string]string `json:"json"`
	JSONSource string            `json:"json_source"`
}

// Resource is one resource token's properties. A type is "string",
// "integer", "number", "boolean", "any", "array<T>", "map<T>" or an object
// type name (a key of Schema.Types).
type Resource struct {
	Inputs   map[string]string `json:"inputs"`
	Required []string          `json:"required,omitempty"`
	Secret   []string          `json:"secret,omitempty"`
	Outputs  map[string]string `json:"outputs"`
}

// Object is an object type's fields and its required ones.
type Object struct {
	Fields   map[string]string `json:"fields"`
	Required []string          `json:"required,omitempty"`
}

func main() {
	version := flag.String("version", "v6.83.4", "pulumi-aws SDK version (a tag of "+module+")")
	ecsVersion := flag.String("ecs-version", "v1.105.1", "version of "+ecsModule+", whose API model gives the container definitions' JSON")
	root := flag.String("root", "../..", "the deployer repository")
	flag.Parse()
	log.SetFlags(0)
	tokens, err := kindTokens(filepath.Join(*root, "internal", "engine", "pulumi"))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := download(module, *version)
	if err != nil {
		log.Fatal(err)
	}
	ecsDir, err := download(ecsModule, *ecsVersion)
	if err != nil {
		log.Fatal(err)
	}
	s := &Schema{Source: module + " " + *version, Generator: "scripts/awsschema",
		Resources: map[string]*Resource{}, Types: map[string]*Object{},
		JSONSource: ecsModule + " " + *ecsVersion, JSON: map[string]string{}}
	cd, err := ecsShapes(filepath.Join(ecsDir, "schemas", "schemas.go"), "ContainerDefinition", s)
	if err != nil {
		log.Fatal(err)
	}
	s.JSON["aws:ecs/taskDefinition:TaskDefinition.containerDefinitions"] = "array<" + cd + ">"
	pkgs := map[string]*pkg{}
	for _, tok := range tokens {
		mod := strings.SplitN(strings.TrimPrefix(tok, "aws:"), "/", 2)[0]
		p := pkgs[mod]
		if p == nil {
			if p, err = parsePkg(filepath.Join(dir, "go", "aws", mod), mod); err != nil {
				log.Fatal(err)
			}
			pkgs[mod] = p
		}
		r, err := p.resource(tok, s)
		if err != nil {
			log.Fatal(err)
		}
		s.Resources[tok] = r
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "array<string>", not "array\u003cstring\u003e"
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(*root, "internal", "engine", "pulumi", "testdata", "aws-schema.json")
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s: %d resources, %d object types from %s\n", out, len(s.Resources), len(s.Types), s.Source)
}

var tokenRE = regexp.MustCompile(`^aws:[a-z0-9]+/[A-Za-z0-9]+:[A-Za-z0-9]+$`)

// kindTokens returns the "aws:…" string literals of the non-test Go files in dir, sorted.
func kindTokens(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && tokenRE.MatchString(s) {
					seen[s] = true
				}
			}
			return true
		})
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no aws:… type token in %s", dir)
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

func download(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: no go.mod is read or changed
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(out, &info)
	if err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s %s", module, version, err, info.Error, stderr.String())
	}
	return info.Dir, nil
}

// pkg is one parsed package of the SDK (go/aws/rds).
type pkg struct {
	mod     string
	structs map[string]*ast.StructType
	funcs   map[string]*ast.FuncDecl
	// newFor maps a token to the New… function registering it.
	newFor map[string]*ast.FuncDecl
}

func parsePkg(dir, mod string) (*pkg, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s (%v)", dir, err)
	}
	p := &pkg{mod: mod, structs: map[string]*ast.StructType{}, funcs: map[string]*ast.FuncDecl{}, newFor: map[string]*ast.FuncDecl{}}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							p.structs[ts.Name.Name] = st
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || !strings.HasPrefix(d.Name.Name, "New") {
					continue
				}
				p.funcs[d.Name.Name] = d
				ast.Inspect(d.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok || len(call.Args) == 0 {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "RegisterResource" {
						if lit, ok := call.Args[0].(*ast.BasicLit); ok {
							tok, _ := strconv.Unquote(lit.Value)
							p.newFor[tok] = d
						}
					}
					return true
				})
			}
		}
	}
	return p, nil
}

func (p *pkg) resource(tok string, s *Schema) (*Resource, error) {
	fn := p.newFor[tok]
	if fn == nil {
		return nil, fmt.Errorf("%s: no New… function of package %s registers it", tok, p.mod)
	}
	name := strings.TrimPrefix(fn.Name.Name, "New") // Instance
	lower := strings.ToLower(name[:1]) + name[1:]
	args, res, state := p.structs[lower+"Args"], p.structs[name], p.structs[lower+"State"]
	if args == nil || res == nil || state == nil {
		return nil, fmt.Errorf("%s: structs %sArgs, %s, %sState not all found in package %s", tok, lower, name, lower, p.mod)
	}
	r := &Resource{Inputs: map[string]string{}, Outputs: map[string]string{}}
	goToProp := map[string]string{}
	for _, f := range fieldsOf(args) {
		r.Inputs[f.prop] = p.typeOf(f.expr, s)
		goToProp[f.goName] = f.prop
	}
	stateTypes := map[string]ast.Expr{}
	for _, f := range fieldsOf(state) {
		stateTypes[f.prop] = f.expr
	}
	for _, f := range fieldsOf(res) {
		e, ok := stateTypes[f.prop]
		if !ok {
			return nil, fmt.Errorf("%s: output %s is not in %sState", tok, f.prop, lower)
		}
		r.Outputs[f.prop] = p.typeOf(e, s)
	}
	// Required: `if args.X == nil { return …"invalid value for required argument 'X'" }`.
	// Secret: pulumi.AdditionalSecretOutputs([]string{"password"}).
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			v, _ := strconv.Unquote(n.Value)
			if g, ok := strings.CutPrefix(v, "invalid value for required argument '"); ok {
				g = strings.TrimSuffix(g, "'")
				prop, ok := goToProp[g]
				if !ok {
					log.Fatalf("%s: required argument %s is not a field of %sArgs", tok, g, lower)
				}
				r.Required = append(r.Required, prop)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "AdditionalSecretOutputs" && len(n.Args) == 1 {
				if cl, ok := n.Args[0].(*ast.CompositeLit); ok {
					for _, e := range cl.Elts {
						if lit, ok := e.(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(lit.Value)
							r.Secret = append(r.Secret, v)
						}
					}
				}
			}
		}
		return true
	})
	sort.Strings(r.Required)
	sort.Strings(r.Secret)
	return r, nil
}

type field struct {
	goName, prop string
	expr         ast.Expr
}

// fieldsOf returns the fields of st with a `pulumi:"name"` tag.
func fieldsOf(st *ast.StructType) []field {
	var out []field
	for _, f := range st.Fields.List {
		if f.Tag == nil || len(f.Names) != 1 {
			continue
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		prop, ok := structTag(tag, "pulumi")
		if !ok || prop == "" {
			continue
		}
		out = append(out, field{f.Names[0].Name, strings.Split(prop, ",")[0], f.Type})
	}
	return out
}

func structTag(tag, key string) (string, bool) {
	for _, part := range strings.Fields(tag) {
		if v, ok := strings.CutPrefix(part, key+":"); ok {
			s, err := strconv.Unquote(v)
			return s, err == nil
		}
	}
	return "", false
}

// typeOf names the type of a plain (not Input/Output) Go type expression,
// adding object types to s.Types.
func (p *pkg) typeOf(e ast.Expr, s *Schema) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return p.typeOf(t.X, s)
	case *ast.ArrayType:
		return "array<" + p.typeOf(t.Elt, s) + ">"
	case *ast.MapType:
		return "map<" + p.typeOf(t.Value, s) + ">"
	case *ast.InterfaceType:
		return "any"
	case *ast.Ident:
		switch t.Name {
		case "string":
			return "string"
		case "int", "int64":
			return "integer"
		case "float64":
			return "number"
		case "bool":
			return "boolean"
		case "any":
			return "any"
		}
		st, ok := p.structs[t.Name]
		if !ok {
			log.Fatalf("package %s: type %s is neither a scalar nor a struct", p.mod, t.Name)
		}
		name := p.mod + "." + t.Name
		if _, done := s.Types[name]; done {
			return name
		}
		o := &Object{Fields: map[string]string{}}
		s.Types[name] = o // before the fields: a type may refer to itself
		for _, f := range fieldsOf(st) {
			o.Fields[f.prop] = p.typeOf(f.expr, s)
			switch f.expr.(type) {
			case *ast.Ident:
				o.Required = append(o.Required, f.prop)
			}
		}
		sort.Strings(o.Required)
		return name
	}
	log.Fatalf("package %s: unsupported type expression %T", p.mod, e)
	return ""
}

func selName(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}
