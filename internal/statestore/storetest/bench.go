package storetest

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// BenchResources is the size of the state Bench measures (docs/backends.md#performance-make-bench).
const BenchResources = 10_000

// Bench measures one load + verify + save of a state of BenchResources
// resources (about 15 MB, see LargeState) against the backend: ns/op is the
// time of the three, B/op what they allocate; MB/doc reports the document
// size and peak-heap-MB the largest heap (live and unswept objects, sampled
// every millisecond) seen while the loop ran, and cpu-ms/op the CPU time of
// this process (user + system) per op, which a loaded machine does not inflate
// as it does ns/op. The target is under 500 ms
// per op and under 250 MB of peak memory on every backend.
func Bench(b *testing.B, newBackend func(b *testing.B) statestore.Backend) {
	ctx := context.Background()
	be := newBackend(b)
	b.Cleanup(func() { _ = be.Close() })
	s := statestore.New(be)
	stack := UniqueStack(b)
	head, err := s.Save(ctx, LargeState(stack, env, BenchResources), statestore.Head{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	raw, _, err := be.Read(ctx, stack, env)
	if err != nil {
		b.Fatal(err)
	}
	stop := samplePeakHeap()
	cpu := testenv.CPUTime()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, h, err := s.Load(ctx, stack, env)
		if err != nil {
			b.Fatal(err)
		}
		if h != head {
			b.Fatalf("loaded head %+v, want %+v", h, head)
		}
		st.Serial++
		st.Resources["service-0000/component-0"].Status = statestore.ResourceStatus(fmt.Sprintf("ready-%d", st.Serial))
		if head, err = s.Save(ctx, st, h, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(testenv.CPUTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(raw))/1e6, "MB/doc")
	b.ReportMetric(float64(stop())/1e6, "peak-heap-MB")
}

// samplePeakHeap samples the heap until the returned function is called,
// which returns the largest value seen, in bytes.
func samplePeakHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}
