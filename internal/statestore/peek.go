package statestore

import "encoding/json"

// PeekHead reads serial and lineage from a state document without verifying
// it: restore uses it to replace a state that failed verification. Zero
// values when the document does not parse.
func PeekHead(data []byte) (serial int64, lineage string) {
	var h struct {
		Serial  int64  `json:"serial"`
		Lineage string `json:"lineage"`
	}
	_ = json.Unmarshal(data, &h)
	return h.Serial, h.Lineage
}
