package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// ecsShapes adds the ECS API shape root and the shapes it reaches to s.Types
// as "ecsapi.Name", read from the smithy schemas of the AWS SDK for Go
// (`var X = smithy.NewSchema(…, smithy.ShapeTypeT, …)` and
// `X_m = X.AddMember("m", Y)`), and returns root's type name. The API model
// marks no member of these shapes required.
func ecsShapes(file, root string, s *Schema) (string, error) {
	af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	m := &ecsModel{file: file, s: s, shapeType: map[string]string{}, shapeName: map[string]string{}, members: map[string][]member{}}
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			m.schema(n)
		case *ast.CallExpr:
			m.addMember(n)
		}
		return true
	})
	return m.typeOf(root)
}

// ecsModel is the smithy schema file of the ECS API as ecsShapes read it.
type ecsModel struct {
	file      string
	s         *Schema
	shapeType map[string]string // var -> ShapeTypeX
	shapeName map[string]string // var -> shape name
	members   map[string][]member
}

type member struct{ name, target string }

// schema records `var X = smithy.NewSchema(…{Name: "n"}…, smithy.ShapeTypeT, …)`.
func (m *ecsModel) schema(n *ast.ValueSpec) {
	if len(n.Names) != 1 || len(n.Values) != 1 {
		return
	}
	call, ok := n.Values[0].(*ast.CallExpr)
	if !ok || len(call.Args) < 2 || selName(call.Fun) != "NewSchema" {
		return
	}
	m.shapeType[n.Names[0].Name] = selName(call.Args[1])
	if cl, ok := call.Args[0].(*ast.CompositeLit); ok {
		for _, e := range cl.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok && fmt.Sprint(kv.Key) == "Name" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok {
					m.shapeName[n.Names[0].Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
}

// addMember records `X.AddMember("m", Y)`, Y a schema of the file or of
// the smithy prelude.
func (m *ecsModel) addMember(n *ast.CallExpr) {
	sel, ok := n.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "AddMember" || len(n.Args) != 2 {
		return
	}
	owner, ok := sel.X.(*ast.Ident)
	lit, ok2 := n.Args[0].(*ast.BasicLit)
	if !ok || !ok2 {
		return
	}
	name, _ := strconv.Unquote(lit.Value)
	target := ""
	switch t := n.Args[1].(type) {
	case *ast.Ident:
		target = t.Name
	case *ast.SelectorExpr:
		target = "prelude." + t.Sel.Name
	}
	m.members[owner.Name] = append(m.members[owner.Name], member{name, target})
}

// typeOf is the schema type of shape variable v, adding the structures it
// reaches to m.s.Types.
func (m *ecsModel) typeOf(v string) (string, error) {
	switch v {
	case "prelude.String":
		return "string", nil
	case "prelude.Integer", "prelude.Long":
		return "integer", nil
	case "prelude.Boolean":
		return "boolean", nil
	case "prelude.Double", "prelude.Float":
		return "number", nil
	}
	switch m.shapeType[v] {
	case "ShapeTypeString", "ShapeTypeEnum", "ShapeTypeTimestamp":
		return "string", nil
	case "ShapeTypeInteger", "ShapeTypeLong", "ShapeTypeIntEnum":
		return "integer", nil
	case "ShapeTypeDouble", "ShapeTypeFloat":
		return "number", nil
	case "ShapeTypeBoolean":
		return "boolean", nil
	case "ShapeTypeDocument":
		return "any", nil
	case "ShapeTypeList":
		return m.container(v, "member", "array")
	case "ShapeTypeMap":
		return m.container(v, "value", "map")
	case "ShapeTypeStructure", "ShapeTypeUnion":
		return m.structure(v)
	}
	return "", fmt.Errorf("%s: shape %s (%s) is not understood", m.file, v, m.shapeType[v])
}

// container is "array<T>" or "map<T>" of list or map v, T the type of
// its member elem; an error when v has no such member.
func (m *ecsModel) container(v, elem, kind string) (string, error) {
	for _, mem := range m.members[v] {
		if mem.name == elem {
			t, err := m.typeOf(mem.target)
			return kind + "<" + t + ">", err
		}
	}
	return "", fmt.Errorf("%s: shape %s (%s) is not understood", m.file, v, m.shapeType[v])
}

// structure adds structure v as "ecsapi.Name" with its members' types.
func (m *ecsModel) structure(v string) (string, error) {
	name := "ecsapi." + m.shapeName[v]
	if _, done := m.s.Types[name]; done {
		return name, nil
	}
	o := &Object{Fields: map[string]string{}}
	m.s.Types[name] = o
	for _, mem := range m.members[v] {
		t, err := m.typeOf(mem.target)
		if err != nil {
			return "", err
		}
		o.Fields[mem.name] = t
	}
	return name, nil
}
