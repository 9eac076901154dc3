# METADATA
# title: A Command component may not pipe a download into a shell
# description: |
#   curl ... | sh runs whatever the server sends today; pin and check what you run
#   (download to a file, verify its checksum, then run it).
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
