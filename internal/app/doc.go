// Package app is the wiring behind the commands, as GitHub CLI's
// pkg/cmd/factory is behind cmdutil.Factory: the Factory the commands are
// built from (the streams, environment, global flags, the Masker, lazy
// constructors), and the Session that opens what they ask for:
// deployer.yaml with the registries' checks, the audit log, the metrics
// recorder, the lock and state backends (secrets sealed with the
// passphrase or KMS provider), the engines of the registry and the use
// cases' Service on them, with the one Reporter the use cases report to
// (the GitHub reporter; docs/design.md#reporting). It also holds the
// build's version and the shell completion of names. It imports no
// command: internal/cli imports it, never the reverse
// (docs/design.md#package-map).
package app
