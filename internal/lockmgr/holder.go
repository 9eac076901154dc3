package lockmgr

import (
	"os"
	"os/user"

	"github.com/deployer-dev/deployer/internal/proc"
)

// Holder describes the current process as a lock holder (docs/design.md#lock-record): lockedBy is
// "github-actions-run-{GITHUB_RUN_ID}" in GitHub Actions, else "{user}@{hostname}";
// metadata carries user, hostname, pid and the CI system's run id, commit and
// branch from its standard environment variables. getenv is os.Getenv in
// production.
func Holder(getenv func(string) string) (lockedBy string, md Metadata) {
	md.User = getenv("USER")
	if md.User == "" {
		if u, err := user.Current(); err == nil {
			md.User = u.Username
		}
	}
	md.Hostname, _ = os.Hostname()
	md.PID = os.Getpid()
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		md.CISystem, md.CIRunID = "github-actions", getenv("GITHUB_RUN_ID")
		md.GitCommit, md.GitBranch = getenv("GITHUB_SHA"), getenv("GITHUB_REF_NAME")
		if a := getenv("GITHUB_ACTOR"); a != "" {
			md.User = a
		}
		return "github-actions-run-" + md.CIRunID, md
	case getenv("GITLAB_CI") == "true":
		md.CISystem, md.CIRunID = "gitlab-ci", getenv("CI_PIPELINE_ID")
		md.GitCommit, md.GitBranch = getenv("CI_COMMIT_SHA"), getenv("CI_COMMIT_REF_NAME")
	case getenv("BUILDKITE") == "true":
		md.CISystem, md.CIRunID = "buildkite", getenv("BUILDKITE_BUILD_NUMBER")
		md.GitCommit, md.GitBranch = getenv("BUILDKITE_COMMIT"), getenv("BUILDKITE_BRANCH")
	}
	return md.User + "@" + md.Hostname, md
}

// fillHolder completes md with the process's identity where md leaves it empty.
func fillHolder(md Metadata) (string, Metadata) {
	by, def := Holder(os.Getenv)
	if md.User == "" {
		md.User = def.User
	}
	if md.Hostname == "" {
		md.Hostname = def.Hostname
	}
	if md.PID == 0 {
		md.PID = def.PID
	}
	if md.CISystem == "" {
		md.CISystem, md.CIRunID = def.CISystem, def.CIRunID
	}
	if md.GitCommit == "" {
		md.GitCommit = def.GitCommit
	}
	if md.GitBranch == "" {
		md.GitBranch = def.GitBranch
	}
	return by, md
}

// HolderGone reports whether rec's holder ran on this host and its pid is no
// longer running: the deploy died (kill -9, a crash) without releasing, and
// the lock only waits for its expiry or an unlock --force. It is false when
// that cannot be told (another host, no pid).
func HolderGone(rec Record) bool {
	host, _ := os.Hostname()
	if rec.Metadata.Hostname == "" || rec.Metadata.Hostname != host {
		return false
	}
	running, known := proc.Running(rec.Metadata.PID)
	return known && !running
}
