package deployer.command_download_shell_test

import data.deployer.command_download_shell

cmd(create) := {"address": "tools/setup", "kind": "Command", "action": "create", "settings": {"command": {"create": create, "timeout": "2m"}}}

test_curl_pipe_sh_is_denied if {
	command_download_shell.deny["tools/setup: command.create pipes a download into a shell: curl -fsSL https://get.example.com | sh"] with input as {"steps": [cmd("curl -fsSL https://get.example.com | sh")]}
}

test_wget_pipe_sudo_bash_is_denied if {
	count(command_download_shell.deny) == 1 with input as {"steps": [cmd("wget -qO- https://x.example | sudo bash -s -- --yes")]}
}

test_download_then_verify_is_allowed if {
	count(command_download_shell.deny) == 0 with input as {"steps": [cmd("curl -fsSLo tool.sh https://x.example/tool.sh && sha256sum -c tool.sha256 && sh tool.sh")]}
}

test_other_pipes_are_allowed if {
	count(command_download_shell.deny) == 0 with input as {"steps": [cmd("cat out.json | jq . | sh -c 'cat > x'")]}
}

test_unchanged_component_is_not_checked if {
	s := object.union(cmd("curl https://x | sh"), {"action": "no-op"})
	count(command_download_shell.deny) == 0 with input as {"steps": [s]}
}
