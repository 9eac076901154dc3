// Package pulumiadapter is the Pulumi engine (SPEC 8, issue 4, docs/pulumi.md):
// the kind catalog (RDS, ElastiCacheRedis, MicroService, PulumiResource,
// StackReference; docs/kinds.md), the inline Automation API program that
// declares every Pulumi component of a stack/environment as a ComponentResource
// "deployer:component:{Kind}" with children registered by type token, the
// engine.Engine that runs `up`, `destroy`, `preview` and `refresh` against the
// per-stack backend stacks/{stack}/{env}/pulumi, and discovery of the Pulumi
// CLI (FindCLI, *CLIMissingError).
//
// It owns nothing else: ordering across engines, locks and state writes belong
// to internal/deploy.
package pulumiadapter
