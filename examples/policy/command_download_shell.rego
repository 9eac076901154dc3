# METADATA
# title: A Command component may not pipe a download into a shell
# description: |
#   curl ... | sh runs whatever the server sends today; pin and check what you run
#   (download to a file, verify its checksum, then run it). Overridable by the
#   logins of overridable_by from GitHub Actions, and by anyone from a terminal
#   (allow_local_override: a developer trying a vendor's installer; recorded as
#   not verified).
# custom:
#   overridable_by: [octocat]
#   allow_local_override: true
package deployer.command_download_shell

deny contains msg if {
	some step in input.steps
	step.kind == "Command"
	step.action != "no-op"
	some name, cmd in commands(step)
	pipes_download_to_shell(cmd)
	msg := sprintf("%s: command.%s pipes a download into a shell: %s", [step.address, name, cmd])
}

commands(step) := {name: cmd |
	some name, cmd in step.settings.command
	is_string(cmd)
}

pipes_download_to_shell(cmd) if regex.match(`(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b`, cmd)
