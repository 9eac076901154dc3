package command

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/plan"
)

// payload is the JSON object a command reads on stdin (docs/command-kind.md).
type payload struct {
	Stack        string                    `json:"stack"`
	Environment  string                    `json:"environment"`
	Component    string                    `json:"component"` // "service/component"
	Action       string                    `json:"action"`    // create | update | delete
	DeploymentID string                    `json:"deployment_id"`
	Config       map[string]any            `json:"config"`
	EnvConfig    map[string]any            `json:"environment_config"`
	Outputs      map[string]any            `json:"outputs"`
	Dependencies map[string]map[string]any `json:"dependencies"`
	// ImportID is, for an import, the id of the instance to read
	// (DEPLOYER_IMPORT_ID; docs/operations.md#import).
	ImportID string `json:"import_id,omitempty"`
}

// environ returns the DEPLOYER_* variables of p plus outputsPath as
// DEPLOYER_OUTPUTS, appended to base with stale DEPLOYER_* variables of the
// same families removed.
func (p payload) environ(base []string, outputsPath string) []string {
	env := make([]string, 0, len(base)+32)
	for _, kv := range base {
		if !ownVariable(kv) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"DEPLOYER_STACK="+p.Stack,
		"DEPLOYER_ENVIRONMENT="+p.Environment,
		"DEPLOYER_COMPONENT="+p.Component,
		"DEPLOYER_ACTION="+p.Action,
		"DEPLOYER_DEPLOYMENT_ID="+p.DeploymentID,
		"DEPLOYER_OUTPUTS="+outputsPath,
	)
	if p.ImportID != "" {
		env = append(env, "DEPLOYER_IMPORT_ID="+p.ImportID)
	}
	env = flatten(env, "DEPLOYER_CONFIG", p.Config)
	env = flatten(env, "DEPLOYER_ENV_CONFIG", p.EnvConfig)
	env = flatten(env, "DEPLOYER_OUTPUT", p.Outputs)
	for _, addr := range slices.Sorted(maps.Keys(p.Dependencies)) {
		env = flatten(env, "DEPLOYER_DEP_"+envName(addr), p.Dependencies[addr])
	}
	return env
}

// ownVariable reports whether kv is one of the variables this engine sets, so
// that a value inherited from the parent never leaks into a command.
func ownVariable(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	switch name {
	case "DEPLOYER_STACK", "DEPLOYER_ENVIRONMENT", "DEPLOYER_COMPONENT", "DEPLOYER_ACTION",
		"DEPLOYER_DEPLOYMENT_ID", "DEPLOYER_OUTPUTS", "DEPLOYER_IMPORT_ID":
		return true
	}
	for _, p := range []string{"DEPLOYER_CONFIG_", "DEPLOYER_ENV_CONFIG_", "DEPLOYER_OUTPUT_", "DEPLOYER_DEP_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// flatten appends PREFIX_PATH=value for every value under m: leaves as text
// (strings raw, numbers and booleans as JSON, null empty), objects and arrays
// as compact JSON and then their members (arrays by index). Keys are visited
// in sorted order, so colliding names resolve the same way every run.
func flatten(env []string, prefix string, m map[string]any) []string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		env = flattenValue(env, prefix+"_"+envName(k), m[k])
	}
	return env
}

func flattenValue(env []string, name string, v any) []string {
	switch t := v.(type) {
	case map[string]any:
		env = append(env, name+"="+compactJSON(t))
		return flatten(env, name, t)
	case []any:
		env = append(env, name+"="+compactJSON(t))
		for i, e := range t {
			env = flattenValue(env, name+"_"+strconv.Itoa(i), e)
		}
		return env
	default:
		return append(env, name+"="+scalarText(v))
	}
}

func scalarText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		return compactJSON(t)
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// envName upper-cases s and turns every character outside [A-Z0-9] into "_":
// "user-service/api" -> "USER_SERVICE_API", "aws:region" -> "AWS_REGION".
func envName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToUpper(s) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// unwrapMap returns a copy of m with every secret wrapper {secret: true,
// value: X} replaced by X, at any depth (plan.Unwrap, docs/plan.md#secrets).
func unwrapMap(m map[string]any) map[string]any {
	out, _ := plan.Unwrap(m).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}
