package deploy

import "github.com/deployer-dev/deployer/internal/executor"

// Summary is what one deploy or destroy did, counted once by the executor
// (executor.Summary): the human line, --json, the GitHub job summary and
// annotations all render it (docs/commands.md#deploy).
type Summary = executor.Summary
