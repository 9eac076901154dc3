package pulumi

import (
	"encoding/json"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// finished records, during an up, the components whose resources Pulumi
// has applied and saved in this run, with their exported value: what
// tells, after a failed or cancelled run, which components it finished
// (docs/pulumi.md#cancellation). The program learns a resource's outputs
// only once Pulumi has saved the step in its checkpoint (the engine
// answers the registration after saving it), so a component recorded here
// is in Pulumi's state as this run left it, even when pulumi is killed
// right after. Recording happens in the program, inside deployer's
// process: Pulumi registers no resource and writes nothing for it.
type finished struct {
	mu     sync.Mutex
	values map[string]pulumi.MapOutput
	plain  map[string]map[string]any
}

func newFinished() *finished {
	return &finished{values: map[string]pulumi.MapOutput{}, plain: map[string]map[string]any{}}
}

// watch returns v, recording the component addr with its value when v
// resolves. A nil f records nothing.
func (f *finished) watch(addr string, v pulumi.MapOutput) pulumi.MapOutput {
	if f == nil {
		return v
	}
	return v.ApplyT(func(m map[string]any) map[string]any {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.values[addr], f.plain[addr] = v, m
		return m
	}).(pulumi.MapOutput)
}

// snapshot returns the value of every component recorded so far, as it
// would read from Pulumi's exported state: JSON values, and a secret value
// (one of its outputs is secret) as deployer's marker {secret: true,
// value: ...} around it (componentValue opens it).
func (f *finished) snapshot() map[string]any {
	out := map[string]any{}
	if f == nil {
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for addr, m := range f.plain {
		b, err := json.Marshal(m)
		if err != nil {
			continue // not recorded: the component is then read from Pulumi's state as unfinished
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			continue
		}
		if pulumi.IsSecret(f.values[addr]) {
			v = map[string]any{"secret": true, "value": v}
		}
		out[addr] = v
	}
	return out
}
