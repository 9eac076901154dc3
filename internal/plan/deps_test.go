package plan

import (
	"os/exec"
	"strings"
	"testing"
)

// The plan is core: it links no policy engine, no engine and no cloud SDK
// (docs/design.md#package-map). A policy report rides in a plan, so its type
// lives in internal/policy/verdict, which needs no Rego library.
func TestPlanLinksNoPolicyEngineEngineOrCloudSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/open-policy-agent/",
			"github.com/deployer-dev/deployer/internal/policy\x00", // the package itself, not verdict
			"github.com/deployer-dev/deployer/internal/engine/",
			"github.com/pulumi/",
			"github.com/aws/",
			"github.com/jackc/",
			"github.com/redis/",
		} {
			if strings.HasPrefix(d+"\x00", banned) {
				t.Errorf("internal/plan links %s (matching %q): a plan must not pull it in", d, strings.TrimSuffix(banned, "\x00"))
			}
		}
	}
}
