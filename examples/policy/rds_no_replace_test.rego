package deployer.rds_no_replace_test

import data.deployer.rds_no_replace

step(action) := {"address": "users/db", "kind": "RDS", "action": action}

test_replace_in_production_is_denied if {
	rds_no_replace.deny["users/db: replace of an RDS instance in production (its data goes with it)"] with input as {"environment": "production", "steps": [step("replace")]}
}

test_delete_in_production_is_denied if {
	count(rds_no_replace.deny) == 1 with input as {"environment": "prod", "steps": [step("delete")]}
}

test_kind_change_away_from_rds_is_denied if {
	s := {"address": "users/db", "kind": "Command", "action": "replace", "diffs": [{"path": "(kind)", "old": "RDS", "new": "Command", "op": "change"}]}
	count(rds_no_replace.deny) == 1 with input as {"environment": "production", "steps": [s]}
}

test_update_in_production_is_allowed if {
	count(rds_no_replace.deny) == 0 with input as {"environment": "production", "steps": [step("update")]}
}

test_replace_in_dev_is_allowed if {
	count(rds_no_replace.deny) == 0 with input as {"environment": "dev", "steps": [step("replace")]}
}
