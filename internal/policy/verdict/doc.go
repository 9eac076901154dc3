// Package verdict holds what evaluating policies on a plan found: the
// Report of every policy's deny and warn messages, the overrides applied to
// it and the errors a denied plan fails with (docs/policy.md#where-policies-apply).
// It links no policy engine, so the plan, which carries a Report in plan
// --json and in saved plans, needs no Rego library; internal/policy fills
// the Report.
package verdict
