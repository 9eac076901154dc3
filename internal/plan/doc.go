// Package plan turns the desired configuration of one environment
// (config.Resolved) and the stored state (statestore.State) into ordered
// steps: create, update with field-level diffs, replace, delete and no-op
// (docs/plan.md). It also owns the comparison of config trees (diff.go:
// the field diffs and a saved plan's binding against now), secret masking
// (Mask, Unwrap), the dependency order and cycle errors, and saved plans
// (WriteFile, ReadFile). Renderers live in internal/planview.
package plan
