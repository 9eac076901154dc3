package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version information, set with -ldflags (Makefile, .goreleaser.yaml).
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// VersionInfo is what `deployer version` prints.
type VersionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	Go      string `json:"go"`
}

// BuildVersion returns the version set with -ldflags (release builds,
// `make build`), completed from the binary's build information where the
// flags left it empty: the module version of `go install ...@v1.2.3`, and the
// VCS revision and commit time of a build from a git checkout.
func BuildVersion() VersionInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(VersionInfo{Version: Version, Commit: Commit, Date: Date, Go: runtime.Version()}, bi)
}

// Identity is the version a saved plan binds: the version and, when known,
// the commit ("v1.4.0 (3f2c1a9b0d4e)"), so two builds of one version from
// different commits are told apart.
func (v VersionInfo) Identity() string {
	if v.Commit == "" {
		return v.Version
	}
	return v.Version + " (" + v.Commit + ")"
}

// versionFrom fills the empty fields of v (and a "dev" version) from bi.
func versionFrom(v VersionInfo, bi *debug.BuildInfo) VersionInfo {
	if bi == nil {
		return v
	}
	if (v.Version == "" || v.Version == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
				if len(v.Commit) > 12 {
					v.Commit = v.Commit[:12]
				}
			}
		case "vcs.time":
			if v.Date == "" {
				v.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && v.Commit != "" && !strings.HasSuffix(v.Commit, "-dirty") {
		v.Commit += "-dirty"
	}
	return v
}

// Line is the one line `deployer version` and `deployer --version` print:
// "deployer 1.4.0 (a1b2c3d4e5f6, 2026-01-15T10:00:00Z) go1.26.0 linux/amd64";
// platform is the OS/architecture.
func (v VersionInfo) Line(platform string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "deployer %s", v.Version)
	switch {
	case v.Commit != "" && v.Date != "":
		fmt.Fprintf(&b, " (%s, %s)", v.Commit, v.Date)
	case v.Commit != "":
		fmt.Fprintf(&b, " (%s)", v.Commit)
	}
	fmt.Fprintf(&b, " %s %s", v.Go, platform)
	return b.String()
}

// Platform is this binary's OS/architecture, e.g. "linux/amd64".
var Platform = runtime.GOOS + "/" + runtime.GOARCH
