# Helpers the example policies share.
package deployer.lib

# Environments that count as production.
production_environments := {"production", "prod"}

production if input.environment in production_environments
