package config

// starter is the deployer.yaml written by `deployer init`. It loads without
// error and deploys as is: its one component is a local Command.
const starter = `# deployer.yaml: the stack deployer plans and deploys (docs/configuration.md).
#
#   deployer plan   -e dev          # show what would change
#   deployer deploy -e dev --yes    # apply it
#
# Names (stack, environments, services, components): lower-case letters,
# digits and '-', starting with a letter or digit, at most 63 characters.
stack: my-stack

# Where state and locks live. Both default to file://.deployer (a directory
# next to this file). Shared setups use e.g.
#   state: s3://my-deployer-state?region=us-east-1
#   lock:  dynamodb://deployer-state-locks?region=us-east-1
# Environment variables override these: DEPLOYER_BACKEND_STATE, DEPLOYER_BACKEND_LOCK,
# DEPLOYER_LOCK_TTL, DEPLOYER_HEARTBEAT_INTERVAL, DEPLOYER_STALE_AFTER.
backend:
  state: file://.deployer
  lock: file://.deployer
  lock_ttl: 1h              # a lock expires this long after its last heartbeat
  heartbeat_interval: 30s   # how often a running deploy extends its lock
  stale_after: 2m           # no heartbeat for this long: the lock shows as STALE

# Cloud kinds (RDS, ElastiCacheRedis, MicroService, PulumiResource) are applied
# with Pulumi; this is its secrets provider (passphrase or awskms://...).
pulumi:
  secrets_provider: passphrase

# Every environment you deploy to; config here is seen by every component.
environments:
  dev:
    config: {greeting: hello from dev}
  prod:
    config: {greeting: hello from prod}

services:
  hello:
    components:
      message:
        kind: Command       # runs locally: no cloud account needed
        config:
          text: hello, world
        environments:       # per-environment overrides, deep-merged into config
          prod: {text: "hello, production"}
        # protect: true     # refuse any plan that would delete or replace it (docs/operations.md)
        # Commands run with sh -c in this directory. They get the config as
        # JSON on stdin and as DEPLOYER_* variables, and write their outputs
        # as JSON to the file named by $DEPLOYER_OUTPUTS.
        command:
          create: printf '{"text":"%s"}' "$DEPLOYER_CONFIG_TEXT" > "$DEPLOYER_OUTPUTS"
          update: printf '{"text":"%s"}' "$DEPLOYER_CONFIG_TEXT" > "$DEPLOYER_OUTPUTS"
          delete: "true"
          timeout: 1m
      # A second component could wait for this one:
      #   notify:
      #     kind: Command
      #     depends_on: [message]          # same service by name; others as service/component
      #     command: {create: ./scripts/notify.sh}

# Renaming a component deletes the old one and creates a new one, unless a
# moved: entry says it is the same one (docs/operations.md#moves):
# moved:
#   - {from: hello/message, to: hello/greeting}
#
# The stack's own outputs, for other stacks and scripts (deployer output -e dev):
# outputs:
#   text: "${hello/message.text}"
`

// Init returns a commented starter deployer.yaml for `deployer init`.
func Init() []byte { return []byte(starter) }
