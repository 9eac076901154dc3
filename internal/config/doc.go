// Package config owns deployer.yaml (docs/configuration.md): the model (model.go), loading
// with yaml.v3 while keeping line numbers, defaults, validation that names the
// file, the YAML path and the fix (*ValidationError), the DEPLOYER_*
// environment layer (ApplyEnv), name rules and component addresses (names.go:
// ValidateName, Address, SplitAddress), the starter file of
// `deployer init` (Init) and resolving one environment's view of the
// components with its overrides deep-merged (Config.Resolve).
//
// It touches no backend: every name, path and YAML problem is reported before
// a lock or state is opened (docs/configuration.md#validation).
package config
