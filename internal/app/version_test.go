package app

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		in   VersionInfo
		bi   *debug.BuildInfo
		want VersionInfo
	}{
		{"ldflags win", VersionInfo{Version: "v1.2.0", Commit: "abc", Date: "2026-01-01"},
			&debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ffff"}}},
			VersionInfo{Version: "v1.2.0", Commit: "abc", Date: "2026-01-01"}},
		{"go install @version", VersionInfo{Version: "dev"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}},
			VersionInfo{Version: "v1.3.0"}},
		{"go build in a checkout", VersionInfo{Version: "dev"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-23T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			VersionInfo{Version: "dev", Commit: "0123456789ab-dirty", Date: "2026-11-23T00:00:00Z"}},
		{"no build info", VersionInfo{Version: "dev"}, nil, VersionInfo{Version: "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionFrom(tt.in, tt.bi); got != tt.want {
				t.Errorf("versionFrom = %+v, want %+v", got, tt.want)
			}
		})
	}
}
