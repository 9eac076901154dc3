// Package storetest is the conformance suite every state backend (file, S3,
// PostgreSQL) passes, through statestore.Store (docs/backends.md): round trip
// of every field of docs/state-format.md, serial and lineage rules, compare-and-swap
// between clients and between racing goroutines, stale writers, history and
// snapshots, missing state, tampered documents and a 10,000-resource state.
// Bench measures load + verify + save of that state (docs/backends.md#performance-make-bench). A backend's
// test file hands Run and Bench a constructor, as restic's backend tests do.
package storetest
