package statestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// FormatVersion is the format_version of every state document (docs/state-format.md#document).
const FormatVersion = "deployer-state-v1"

// DocVersion is the document "version" field (docs/state-format.md#document).
const DocVersion = "1.0.0"

// APIVersion is the api_version of every resource (docs/state-format.md#document).
const APIVersion = "components.deployer.io/v1"

// State is the deployer-state-v1 document of one stack/environment: the
// format of docs/state-format.md plus serial, lineage and metadata.fence.
type State struct {
	Version           string               `json:"version"`
	FormatVersion     string               `json:"format_version"`
	Serial            int64                `json:"serial"`
	Lineage           string               `json:"lineage"`
	Metadata          Metadata             `json:"metadata"`
	Lock              LockInfo             `json:"lock"`
	Resources         map[string]*Resource `json:"resources"`
	Outputs           map[string]any       `json:"outputs"`
	DeploymentHistory []Deployment         `json:"deployment_history"`
	Checksums         Checksums            `json:"checksums"`
	// Secrets says how the secret values in the document were encrypted
	// (docs/secrets.md); absent when none are.
	Secrets *SecretsInfo `json:"secrets,omitempty"`
	// BasedOn is, in an errored state file only (a state a failed write
	// left beside deployer.yaml), BaseDigest of the state it was written
	// from: state push writes it as a normal push only onto that state
	// (docs/state-format.md#errored-state-files). Never in a stored state.
	BasedOn string `json:"based_on,omitempty"`
}

// BaseDigest digests what identifies the stored state st at head for an
// errored file written from it: "sha256:<hex>" of its lineage, serial,
// deployment id, last update time and checksums; "none" when no state is
// stored (head is zero).
func BaseDigest(st *State, head Head) string {
	if head.IsZero() || st == nil {
		return "none"
	}
	h := sha256.New()
	for _, part := range []string{st.Lineage, strconv.FormatInt(st.Serial, 10), st.Metadata.DeploymentID,
		st.Metadata.LastUpdated.UTC().Format(time.RFC3339Nano), st.Checksums.Resources, st.Checksums.Outputs} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Metadata is the state's metadata block (docs/state-format.md#document) plus the writer's fence.
type Metadata struct {
	Stack         string    `json:"stack"`
	Environment   string    `json:"environment"`
	LastUpdated   time.Time `json:"last_updated"`
	LastUpdatedBy string    `json:"last_updated_by"`
	DeploymentID  string    `json:"deployment_id"`
	GitCommit     string    `json:"git_commit"`
	GitBranch     string    `json:"git_branch"`
	Fence         int64     `json:"fence"`
}

// LockInfo is the state's "lock" block: a view of the lock held while the state
// was written. Null fields when written without a lock.
type LockInfo struct {
	Locked    bool       `json:"locked"`
	LockID    *string    `json:"lock_id"`
	LockedBy  *string    `json:"locked_by"`
	LockedAt  *time.Time `json:"locked_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// ResourceStatus is a resource's status in state (docs/state-format.md#document).
type ResourceStatus string

// The resource statuses deployer writes. States written by other tools may
// hold others ("pending"); the plan re-applies any resource not ready.
const (
	ResourceReady  ResourceStatus = "ready"  // the last apply of the component succeeded
	ResourceFailed ResourceStatus = "failed" // the last apply failed: the next plan retries it
)

// DeploymentStatus is how a deployment ended (deployment_history[].status).
type DeploymentStatus string

// The deployment statuses (docs/design.md#abandoned-deployments for the last).
const (
	DeploymentSuccess   DeploymentStatus = "success"
	DeploymentFailed    DeploymentStatus = "failed"
	DeploymentCancelled DeploymentStatus = "cancelled"
	// DeploymentAbandoned: the deployment's process died while it held its
	// lock (kill -9, a crash, a lost runner) and never recorded an end.
	DeploymentAbandoned DeploymentStatus = "abandoned"
)

// Resource is one component's entry under resources, keyed "service/component".
type Resource struct {
	Kind          string         `json:"kind"`
	APIVersion    string         `json:"api_version"`
	Status        ResourceStatus `json:"status"`
	Lifecycle     Lifecycle      `json:"lifecycle"`
	DesiredConfig map[string]any `json:"desired_config"`
	ActualState   map[string]any `json:"actual_state"`
	Outputs       map[string]any `json:"outputs"`
	// EngineData is the private record the engine that applies the kind keeps
	// of the component (EngineData); stored under the key "pulumi", the
	// name the state format gave it (docs/state-format.md "Engine data").
	EngineData   EngineData          `json:"pulumi"`
	Dependencies []string            `json:"dependencies"`
	Health       *Health             `json:"health"`
	Deployment   *ResourceDeployment `json:"deployment,omitempty"`
	// Inputs are the dependency outputs the component was last applied with
	// (docs/state-format.md "Resolved inputs"); nil in states written before
	// deployer recorded them, which plan reads as "unknown".
	Inputs *ResolvedInputs `json:"inputs,omitempty"`
}

// ResolvedInputs records, per dependency address ("service/component"), the
// outputs that dependency had when this component was last applied. Secret
// values (plan.IsSecretValue, or under a key plan.IsSecretKey accepts) are
// kept as "sha256:<hex>" digests, never in clear (docs/state-format.md).
type ResolvedInputs struct {
	Dependencies map[string]map[string]any `json:"dependencies"`
}

// Lifecycle: creation and update times; Version counts applies of the
// resource; Protect records the component's protect: true when it was last
// applied (docs/configuration.md#protect), omitted when false; ImportedID
// the id it was imported with.
type Lifecycle struct {
	CreatedAt   time.Time `json:"created_at"`
	LastUpdated time.Time `json:"last_updated"`
	Version     int       `json:"version"`
	Protect     bool      `json:"protect,omitempty"`
	// ImportedID is the id of the existing instance the entry adopted
	// (docs/operations.md#import), kept for the entry's life; omitted for
	// an entry deployer created.
	ImportedID string `json:"imported_id,omitempty"`
}

// EngineData is the private record an engine keeps of one resource
// (docs/state-format.md "Engine data"): one JSON value that statestore,
// deploy and the commands carry as it is and never read; only the engine
// that applies the kind knows its shape (the Pulumi engine keeps the URN
// and id of a single-resource component, or the URNs of a multi-resource
// one). Nil when the engine keeps nothing: written as null, and null reads
// as nil.
type EngineData []byte

// MarshalJSON writes the record as it is, null when empty.
func (d EngineData) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// UnmarshalJSON keeps the JSON value without insignificant whitespace
// (its strings and numbers as written); null is nil.
func (d *EngineData) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = nil
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*d = buf.Bytes()
	return nil
}

// Health is the last known health of a resource.
type Health struct {
	Status    string                 `json:"status"`
	Checks    map[string]HealthCheck `json:"checks,omitempty"`
	LastCheck *time.Time             `json:"last_check,omitempty"`
}

// HealthCheck is one named check of Health.
type HealthCheck struct {
	Status    string     `json:"status"`
	LastCheck *time.Time `json:"last_check,omitempty"`
}

// ResourceDeployment records the last deployment that touched a resource.
type ResourceDeployment struct {
	LastDeploymentID              string    `json:"last_deployment_id"`
	LastDeploymentAt              time.Time `json:"last_deployment_at"`
	LastDeploymentDurationSeconds float64   `json:"last_deployment_duration_seconds"`
	RolloutStatus                 string    `json:"rollout_status"`
}

// Deployment is one entry of deployment_history (docs/state-format.md#document) plus the type of
// operation and, for restores, the serial restored from.
type Deployment struct {
	DeploymentID     string           `json:"deployment_id"`
	Type             string           `json:"type,omitempty"` // deploy | destroy | restore | state-push | state-push-forced | state-rm | ...
	Timestamp        time.Time        `json:"timestamp"`
	TriggeredBy      string           `json:"triggered_by"`
	GitCommit        string           `json:"git_commit"`
	Version          string           `json:"version,omitempty"`
	Status           DeploymentStatus `json:"status"`
	DurationSeconds  float64          `json:"duration_seconds"`
	ResourcesChanged ResourcesChanged `json:"resources_changed"`
	Serial           int64            `json:"serial,omitempty"` // serial this deployment wrote
	RestoredFrom     int64            `json:"restored_from,omitempty"`
	Scope            string           `json:"scope,omitempty"` // lock key the deployment held
	Error            string           `json:"error,omitempty"`
	// PolicyOverrides are the policies whose denies the deployment
	// overrode (deploy --override-policy, docs/policy.md#overrides);
	// omitted when none.
	PolicyOverrides []PolicyOverride `json:"policy_overrides,omitempty"`
	// Removed are the components a state-rm removed from the state
	// without deleting them (deployer state rm); omitted otherwise.
	Removed []string `json:"removed,omitempty"`
	// Deleted lists the components the deployment deleted (their
	// delete ran), sorted; omitted when none.
	Deleted []string `json:"deleted,omitempty"`
	// Moved lists the state entries the deployment moved, "FROM -> TO"
	// each (docs/operations.md#moves); omitted when none.
	Moved []string `json:"moved,omitempty"`
	// Imported lists the components the deployment adopted by id,
	// "ADDR (id ID)" each (docs/operations.md#import); omitted when none.
	Imported []string `json:"imported,omitempty"`
	// RunID and RunAttempt name the CI run (deploy --run-id, --run-attempt)
	// whose matrix job made this deployment: the stacks of the run that read
	// this one wait for it (docs/many-stacks.md#one-job-per-stack-the-matrix); omitted
	// for a deploy outside a run.
	RunID      string `json:"run_id,omitempty"`
	RunAttempt int    `json:"run_attempt,omitempty"`
}

// PolicyOverride is one policy a deployment overrode: who did, why, and
// the denies it went past.
type PolicyOverride struct {
	Policy string `json:"policy"`
	Reason string `json:"reason"`
	By     string `json:"by"`
	// Verified is true when a CI provider vouched for By (GitHub Actions'
	// OIDC token or API); false for a local user's override (and in
	// records written before it was checked). Source says where By came
	// from (docs/policy.md#overrides).
	Verified bool     `json:"verified"`
	Source   string   `json:"by_source,omitempty"`
	Denies   []string `json:"denies"`
}

// ResourcesChanged counts what a deployment changed.
type ResourcesChanged struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
	Deleted int `json:"deleted"`
}

// Checksums are "sha256:<hex>" digests of the canonical JSON of resources and
// outputs (docs/state-format.md#checksums-and-canonical-json), verified on every load.
type Checksums struct {
	Resources string `json:"resources"`
	Outputs   string `json:"outputs"`
}
