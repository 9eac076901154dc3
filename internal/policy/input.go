package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Deployment is input.deployment: who deploys what from where, and when
// (docs/policy.md#input).
type Deployment struct {
	// Operation is "plan" or "deploy" (also "destroy").
	Operation string `json:"operation"`
	// Who is the GitHub actor under GitHub Actions, else the holder name
	// of the lock record ("user@host").
	Who    string `json:"who"`
	Commit string `json:"commit"`
	Branch string `json:"branch"`
	// CI reports a run under CI (CI=true or GITHUB_ACTIONS=true).
	CI bool `json:"ci"`
	// Time is when the plan is evaluated, RFC 3339 UTC: what a freeze
	// window compares (time.parse_rfc3339_ns(input.deployment.time)).
	Time time.Time `json:"time"`
}

// Input returns the input document of a policy evaluation: the plan
// document planJSON (what plan --json prints) with "deployment" added, as
// the ast.Value Evaluate takes, decoded straight from the JSON (no Go
// map in between: a 10,000-component plan is converted once). Numbers
// stay exact.
func Input(planJSON []byte, d Deployment) (ast.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	doc, ok := v.(ast.Object)
	if !ok {
		return nil, fmt.Errorf("policy input: the plan document is not a JSON object")
	}
	d.Time = d.Time.UTC()
	dep, err := ast.InterfaceToValue(d)
	if err != nil {
		return nil, err
	}
	doc.Insert(ast.InternedTerm("deployment"), ast.NewTerm(dep))
	return doc, nil
}

// decodeValue reads the next JSON value of dec (UseNumber) as an ast.Value.
func decodeValue(dec *json.Decoder) (ast.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			obj := ast.NewObject()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				obj.Insert(ast.StringTerm(k.(string)), ast.NewTerm(v))
			}
			_, err := dec.Token() // }
			return obj, err
		}
		var terms []*ast.Term
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			terms = append(terms, ast.NewTerm(v))
		}
		_, err := dec.Token() // ]
		return ast.NewArray(terms...), err
	case string:
		return ast.String(t), nil
	case json.Number:
		return ast.Number(t), nil
	case bool:
		return ast.Boolean(t), nil
	case nil:
		return ast.Null{}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok) // unreachable with UseNumber
}
