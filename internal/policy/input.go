package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Deployment is input.deployment: who deploys what from where, and when
// (docs/policy.md#input).
type Deployment struct {
	// Operation is "plan" or "deploy" (also "destroy").
	Operation string `json:"operation"`
	// Who is the holder name of the lock record ("user@host", or the CI
	// actor): the same as the deployment record's triggered_by.
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
// document planJSON (what plan --json prints) with "deployment" added.
// Numbers stay exact (json.Number).
func Input(planJSON []byte, d Deployment) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	d.Time = d.Time.UTC()
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var dep map[string]any
	if err := json.Unmarshal(b, &dep); err != nil {
		return nil, err
	}
	doc["deployment"] = dep
	return doc, nil
}
