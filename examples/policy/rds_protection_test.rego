package deployer.rds_protection_test

import data.deployer.rds_protection

rds(config) := {"address": "users/db", "kind": "RDS", "action": "create", "config": config}

safe := {"deletion": {"protection": true}, "instance": {"class": "db.t4g.micro", "storage": {"encrypted": true}}}

test_protected_and_encrypted_is_allowed if {
	count(rds_protection.deny) == 0 with input as {"environment": "production", "steps": [rds(safe)]}
}

test_missing_deletion_protection_is_denied if {
	rds_protection.deny["users/db: RDS in production needs deletion.protection: true"] with input as {"environment": "production", "steps": [rds(object.remove(safe, ["deletion"]))]}
}

test_unencrypted_storage_is_denied if {
	c := json.patch(safe, [{"op": "replace", "path": "/instance/storage/encrypted", "value": false}])
	rds_protection.deny["users/db: RDS in production needs instance.storage.encrypted: true"] with input as {"environment": "production", "steps": [rds(c)]}
}

test_dev_is_not_checked if {
	count(rds_protection.deny) == 0 with input as {"environment": "dev", "steps": [rds({})]}
}

test_delete_is_not_checked if {
	count(rds_protection.deny) == 0 with input as {"environment": "production", "steps": [{"address": "users/db", "kind": "RDS", "action": "delete"}]}
}
