# METADATA
# title: Production RDS has deletion protection and encrypted storage
# custom:
#   overridable: false
package deployer.rds_protection

import data.deployer.lib

deny contains msg if {
	some step in production_rds
	not step.config.deletion.protection == true
	msg := sprintf("%s: RDS in %s needs deletion.protection: true", [step.address, input.environment])
}

deny contains msg if {
	some step in production_rds
	not step.config.instance.storage.encrypted == true
	msg := sprintf("%s: RDS in %s needs instance.storage.encrypted: true", [step.address, input.environment])
}

production_rds contains step if {
	lib.production
	some step in input.steps
	step.kind == "RDS"
	step.action != "delete"
}
