# METADATA
# title: Change freeze in production from Friday 16:00 UTC to Monday 06:00 UTC
# description: |
#   Uses the deployment's time (input.deployment.time), never the clock of the
#   machine evaluating. Overridable for an incident: --override-policy freeze --reason TEXT,
#   by the on-call logins of overridable_by (replace these) from GitHub Actions.
# custom:
#   overridable_by: [octocat, hubot]
package deployer.freeze

import data.deployer.lib

deny contains msg if {
	lib.production
	changes
	frozen(time.parse_rfc3339_ns(input.deployment.time))
	msg := sprintf("production is frozen from Friday 16:00 to Monday 06:00 UTC (now %s)", [input.deployment.time])
}

changes if {
	some step in input.steps
	step.action != "no-op"
}

frozen(ns) if {
	time.weekday(ns) == "Friday"
	[hour, _, _] := time.clock(ns)
	hour >= 16
}

frozen(ns) if time.weekday(ns) in {"Saturday", "Sunday"}

frozen(ns) if {
	time.weekday(ns) == "Monday"
	[hour, _, _] := time.clock(ns)
	hour < 6
}

warn contains msg if {
	lib.production
	changes
	not frozen(time.parse_rfc3339_ns(input.deployment.time))
	time.weekday(time.parse_rfc3339_ns(input.deployment.time)) == "Friday"
	msg := "a Friday deploy to production: the freeze starts at 16:00 UTC"
}
