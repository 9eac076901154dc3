// Package pulumi is the Pulumi engine (docs/pulumi.md): the kind catalog
// (RDS, ElastiCacheRedis, MicroService, PulumiResource;
// docs/kinds.md), the inline Automation API program that registers the
// resources of every Pulumi component of a stack/environment by type token
// at the root of the Pulumi stack, named after their component
// (docs/pulumi.md#resource-layout), and
// the engine.Engine that runs `up`, `destroy`, `preview` and `refresh`
// against the per-stack backend stacks/{stack}/{env}/pulumi. It checks the
// CLI, the passphrase and the provider plugins before any lock (Preflight),
// reads what state records from Pulumi's exported state (no provider
// internals, secrets marked), and cleans up after a cancelled or killed run
// (Pulumi's lock, pending operations, orphaned provider processes).
//
// It owns nothing else: ordering across engines, locks and state writes
// belong to internal/deploy. Only cmd/deployer builds it.
package pulumi
