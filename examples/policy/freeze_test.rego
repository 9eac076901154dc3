package deployer.freeze_test

import data.deployer.freeze

plan_at(t) := {"environment": "production", "steps": [{"address": "web/api", "action": "update"}], "deployment": {"time": t}}

test_friday_evening_is_denied if {
	count(freeze.deny) == 1 with input as plan_at("2026-11-27T17:30:00Z")
}

test_sunday_is_denied if {
	count(freeze.deny) == 1 with input as plan_at("2026-11-29T12:00:00Z")
}

test_monday_early_is_denied if {
	count(freeze.deny) == 1 with input as plan_at("2026-11-30T05:59:00Z")
}

test_thursday_is_allowed if {
	count(freeze.deny) == 0 with input as plan_at("2026-11-26T17:30:00Z")
	count(freeze.warn) == 0 with input as plan_at("2026-11-26T17:30:00Z")
}

test_friday_morning_is_allowed_with_a_warning if {
	count(freeze.deny) == 0 with input as plan_at("2026-11-27T09:00:00Z")
	count(freeze.warn) == 1 with input as plan_at("2026-11-27T09:00:00Z")
}

test_no_changes_is_allowed if {
	count(freeze.deny) == 0 with input as {"environment": "production", "steps": [{"action": "no-op"}], "deployment": {"time": "2026-11-28T12:00:00Z"}}
}

test_dev_is_never_frozen if {
	count(freeze.deny) == 0 with input as object.union(plan_at("2026-11-28T12:00:00Z"), {"environment": "dev"})
}
