package app

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// The stacks of a --all run stream their components' lines prefixed;
// under GitHub Actions a line writes no workflow command, elsewhere it is
// passed as it is.
func TestPrefixLinesNeutraliseWorkflowCommandsUnderActions(t *testing.T) {
	for actions, want := range map[bool]string{
		true:  "[qs] [app/c] #\\#[stop-commands]x\n[qs] [app/c] 50%\r\\::stop-commands::y\n",
		false: "[qs] [app/c] ##[stop-commands]x\n[qs] [app/c] 50%\r::stop-commands::y\n",
	} {
		var mu sync.Mutex
		var b bytes.Buffer
		w := prefixLines(&mu, &b, "[qs] ", actions)
		_, _ = io.WriteString(w, "[app/c] ##[stop-commands]x\n[app/c] 50%\r::stop-commands::y\n")
		if b.String() != want {
			t.Errorf("actions=%v: wrote %q, want %q", actions, b.String(), want)
		}
	}
}
