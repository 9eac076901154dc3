// Package statestore owns the deployer-state-v1 document (docs/state-format.md):
// its model (model.go), its encoding with canonical-JSON checksums
// (canonical.go, codec.go), the names of history snapshots (snapshot.go),
// the Store (store.go), which enforces checksums, serial and lineage once,
// above every Backend, and the snapshot timeline (timeline.go: order, limit,
// uncommitted snapshots, the snapshot a serial stands for), also kept once. Backends (file, s3, postgres) store bytes only; each
// passes the conformance suite in storetest. The format is documented in
// docs/state-format.md.
package statestore
