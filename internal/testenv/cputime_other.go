//go:build !unix

package testenv

import "time"

// CPUTime is not measured outside unix: benchmarks report 0 cpu-ms/op.
func CPUTime() time.Duration { return 0 }
