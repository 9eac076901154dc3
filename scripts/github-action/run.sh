#!/usr/bin/env bash
# Step 2 of action.yml: run one deployer command from the action's inputs
# and set the step outputs exit-code and plan-json; deployer itself writes
# changes, serial and deployment-id to GITHUB_OUTPUT and the plan and result
# to GITHUB_STEP_SUMMARY (docs/github-actions.md).
#
# Inputs (environment): INPUT_COMMAND (e.g. deploy, "state locks"),
# INPUT_STACK, INPUT_ENVIRONMENT, INPUT_LOCK_TIMEOUT, INPUT_ARGS (split on
# whitespace), INPUT_COMMENT_ON_PR (true: plan gets --github-comment; with all, one comment for every stack),
# INPUT_ALL (true: --all, every stack; no --stack, no saved plan),
# INPUT_CHANGED_SINCE (with all or matrix: --changed-since REF),
# INPUT_MATRIX (true: run stacks --matrix instead of the command and set the
# outputs matrix and stack-count), INPUT_RUN_ID, INPUT_RUN_ATTEMPT,
# INPUT_UPSTREAM, INPUT_WAIT_TIMEOUT (one job of a matrix run: deploy
# --run-id with its flags; plan --run-id, the run's one comment),
# DEPLOYER_BIN (default: deployer on PATH). The stack and environment
# inputs are passed only to commands that take them.
# deploy, destroy, restore and unlock get --yes (a runner has no terminal to
# confirm on); plan saves its plan to $RUNNER_TEMP and reports its path.
# The step fails with deployer's exit code, except plan
# --detailed-exitcode's 2 (changes), which is a success.
set -uo pipefail

bin="${DEPLOYER_BIN:-deployer}"
read -r -a cmd <<<"${INPUT_COMMAND:-plan}"
read -r -a extra <<<"${INPUT_ARGS:-}"
[ "${#cmd[@]}" -gt 0 ] || { echo "::error title=deployer action::the command input is empty: set it to plan, deploy, destroy, ..."; exit 2; }
out="${GITHUB_OUTPUT:-/dev/null}"
if [ "${INPUT_MATRIX:-false}" = true ]; then
	# The planning job of a matrix run (docs/many-stacks.md#one-job-per-stack-the-matrix).
	argv=(stacks --matrix)
	[ -n "${INPUT_ENVIRONMENT:-}" ] && argv+=(--environment "$INPUT_ENVIRONMENT")
	[ -n "${INPUT_CHANGED_SINCE:-}" ] && argv+=(--changed-since "$INPUT_CHANGED_SINCE")
	echo "deployer ${argv[*]}"
	matrix=$("$bin" "${argv[@]}")
	code=$?
	echo "exit-code=$code" >>"$out"
	[ "$code" -eq 0 ] || exit "$code"
	echo "$matrix"
	# Every entry opens with {"stack": (JSON escapes a quote inside a string).
	count=$(grep -o '{"stack":' <<<"$matrix" | wc -l)
	{
		echo "matrix=$matrix"
		echo "stack-count=$((count))"
	} >>"$out"
	exit 0
fi
argv=("${cmd[@]}")
# The stack and environment inputs go only to commands that take --stack /
# --environment (not backend init, lock exec, version, ...): the command's own
# help says which flags it has, so this never drifts from the binary.
help=$("$bin" "${cmd[@]}" --help 2>/dev/null || true)
takes() { grep -qE -- "^[[:space:]]+(-[a-z], )?--$1[[:space:]]" <<<"$help"; }
pass() { # pass FLAG VALUE
	[ -n "$2" ] || return 0
	if takes "$1"; then
		argv+=("--$1" "$2")
	else
		echo "::notice title=deployer action::deployer ${cmd[*]} takes no --$1: the $1 input ($2) is not passed to it"
	fi
}
all=false
[ "${INPUT_ALL:-false}" = true ] && all=true
if $all; then
	argv+=(--all)
	[ -n "${INPUT_CHANGED_SINCE:-}" ] && argv+=(--changed-since "$INPUT_CHANGED_SINCE")
elif [ -n "${INPUT_CHANGED_SINCE:-}" ]; then
	echo "::error title=deployer action::changed-since needs all: true"
	exit 2
else
	pass stack "${INPUT_STACK:-}"
fi
pass environment "${INPUT_ENVIRONMENT:-}"
if [ -n "${INPUT_RUN_ID:-}" ]; then
	# One job of a matrix run: deploy waits for its upstream stacks of the
	# run; plan writes its section of the run's one pull request comment.
	$all && { echo "::error title=deployer action::run-id is one stack per job: it does not go with all: true"; exit 2; }
	argv+=(--run-id "$INPUT_RUN_ID")
	if [ "${cmd[0]}" = deploy ]; then
		[ -n "${INPUT_RUN_ATTEMPT:-}" ] && argv+=(--run-attempt "$INPUT_RUN_ATTEMPT")
		[ -n "${INPUT_UPSTREAM:-}" ] && argv+=(--upstream "$INPUT_UPSTREAM")
		[ -n "${INPUT_WAIT_TIMEOUT:-}" ] && argv+=(--wait-timeout "$INPUT_WAIT_TIMEOUT")
	elif [ "${cmd[0]}" != plan ]; then
		echo "::error title=deployer action::run-id is for command deploy or plan, not ${cmd[*]}"
		exit 2
	fi
fi

plan_json=""
case "${cmd[0]}" in
deploy | destroy | restore)
	argv+=(--yes)
	[ -n "${INPUT_LOCK_TIMEOUT:-}" ] && argv+=(--lock-timeout "$INPUT_LOCK_TIMEOUT")
	;;
unlock)
	argv+=(--yes)
	;;
plan)
	if ! $all; then
		plan_json="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/deployer-plan-${GITHUB_RUN_ID:-0}-${GITHUB_RUN_ATTEMPT:-1}-${GITHUB_JOB:-job}.json"
		argv+=(--out "$plan_json")
	fi
	[ "${INPUT_COMMENT_ON_PR:-false}" = true ] && argv+=(--github-comment)
	;;
esac
argv+=("${extra[@]}")

echo "deployer ${argv[*]}"
"$bin" "${argv[@]}"
code=$?

echo "exit-code=$code" >>"$out"
if [ -n "$plan_json" ] && [ -f "$plan_json" ]; then
	echo "plan-json=$plan_json" >>"$out"
fi
if [ "${cmd[0]}" = plan ] && [ "$code" -eq 2 ] && [[ " ${extra[*]} " == *" --detailed-exitcode "* ]]; then
	exit 0
fi
exit "$code"
