package pulumi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// Info is what the Pulumi engine keeps of a component in deployer's state,
// as its engine data (statestore.EngineData, under the resource's "pulumi"
// key: docs/state-format.md#example shows both shapes): the URN and id of
// a single-resource component, or the URNs of a multi-resource one.
type Info struct {
	URN  string   `json:"urn,omitempty"`
	ID   string   `json:"id,omitempty"`
	URNs []string `json:"urns,omitempty"`
}

// Data encodes i as a resource's engine data, strings written as the state
// writes them (no HTML escaping); nil for a nil i.
func (i *Info) Data() statestore.EngineData {
	if i == nil {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(i); err != nil {
		// Info holds strings and string slices only, which encoding/json
		// always encodes.
		panic(fmt.Sprintf("pulumi: encode %+v: %v", i, err)) // unreachable
	}
	return statestore.EngineData(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// InfoOf decodes the engine data of a resource of a Pulumi kind: nil, nil
// when it has none; an error when it is not Pulumi's shape.
func InfoOf(d statestore.EngineData) (*Info, error) {
	if len(d) == 0 {
		return nil, nil
	}
	var i Info
	if err := json.Unmarshal(d, &i); err != nil {
		return nil, fmt.Errorf("the state's pulumi record is not {urn, id} or {urns}: %w", err)
	}
	return &i, nil
}
