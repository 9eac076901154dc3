package command

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/enginetest"
	"github.com/deployer-dev/deployer/internal/plan"
)

// The Command engine passes the engine conformance suite: a component is a
// file named after it in the project directory.
func TestConformance(t *testing.T) {
	file := func(addr string) string { return filepath.Base(addr) + ".txt" }
	enginetest.Run(t, enginetest.Fixture{
		New:    func(*testing.T) engine.Engine { return testEngine() },
		Inputs: func(t *testing.T) engine.Inputs { return inputs(t, nil) },
		Step: func(_ *testing.T, addr string, v int) plan.Step {
			write := fmt.Sprintf(`echo %d > %s && printf '{"version":"%d"}' > "$DEPLOYER_OUTPUTS"`, v, file(addr), v)
			return step(addr, plan.Create, Spec{Create: write, Delete: "rm -f " + file(addr)}, map[string]any{"version": v})
		},
		Slow: func(_ *testing.T, addr string) (plan.Step, string) {
			return step(addr, plan.Create, Spec{Create: "echo running; while :; do sleep 0.05; done"}, nil), "running"
		},
		Live: func(t *testing.T, in engine.Inputs, addr string) bool {
			_, err := os.Stat(filepath.Join(in.Dir, file(addr)))
			return err == nil
		},
	})
}
