# METADATA
# title: No replace or delete of an RDS instance in production
# description: |
#   A replace deletes the database with its data before creating a new one.
#   Overridable (deployer deploy --override-policy rds_no_replace --reason TEXT)
#   for the planned migration that means it, by the logins of overridable_by
#   (your database owners: replace these) from GitHub Actions.
# custom:
#   overridable_by: [octocat, hubot]
package deployer.rds_no_replace

import data.deployer.lib

deny contains msg if {
	lib.production
	some step in input.steps
	step.action in {"replace", "delete"}
	was_rds(step)
	msg := sprintf("%s: %s of an RDS instance in %s (its data goes with it)", [step.address, step.action, input.environment])
}

was_rds(step) if step.kind == "RDS"

# A kind change away from RDS deletes the RDS instance too.
was_rds(step) if {
	some d in step.diffs
	d.path == "(kind)"
	d.old == "RDS"
}
