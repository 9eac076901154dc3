package awsbackend

import (
	"fmt"
	"strings"
)

// Item is one line of a Report: a resource setting and what `deployer backend init` did to it.
type Item struct {
	Resource string // `dynamodb table "deployer-state-locks"`, `s3 bucket "b"`
	Setting  string // "table", "ttl on expiresAt", "versioning", "encryption", "public access block"
	Outcome  string // OutcomeCreated, OutcomeExisted, OutcomeSkipped or OutcomeChecked
	Note     string // why it was skipped, or details
}

// Outcomes of an Item.
const (
	OutcomeCreated = "created"
	OutcomeExisted = "already existed"
	OutcomeSkipped = "skipped"
	OutcomeChecked = "checked" // a property of the server, verified (conditional writes)
)

// Report lists what `deployer backend init` created, what already existed and
// what the endpoint does not support, for the AWS backends: the S3 bucket
// (EnsureBucket) and the DynamoDB lock table (internal/lockmgr/dynamodb).
type Report struct {
	Items []Item
}

// Add appends an item: res `s3 bucket "b"`, setting "versioning", outcome
// OutcomeCreated, OutcomeExisted or OutcomeSkipped, note "" or why.
func (r *Report) Add(res, setting, outcome, note string) {
	r.Items = append(r.Items, Item{Resource: res, Setting: setting, Outcome: outcome, Note: note})
}

// String renders one line per item: `s3 bucket "b": versioning: created`.
func (r Report) String() string {
	var b strings.Builder
	for _, it := range r.Items {
		fmt.Fprintf(&b, "%s: %s: %s", it.Resource, it.Setting, it.Outcome)
		if it.Note != "" {
			fmt.Fprintf(&b, " (%s)", it.Note)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
