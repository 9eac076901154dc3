package proc

import (
	"os"
	"testing"
)

// Without ps(1) (minimal images), Kill still finds the provider plugins a
// command started in groups of their own: from /proc.
func TestProcParentsReadsTheProcessTable(t *testing.T) {
	parents := procParents()
	if got := parents[os.Getpid()]; got != os.Getppid() {
		t.Fatalf("procParents()[%d] = %d, want %d (the test's parent)", os.Getpid(), got, os.Getppid())
	}
	if ps := processParents(); ps[os.Getpid()] != os.Getppid() {
		t.Errorf("processParents()[%d] = %d, want %d", os.Getpid(), ps[os.Getpid()], os.Getppid())
	}
}
