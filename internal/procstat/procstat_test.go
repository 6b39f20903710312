package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux /proc only")
	}
	for _, pid := range []int{0, os.Getpid()} {
		if rss := RSS(pid); rss < 1<<20 {
			t.Errorf("RSS(%d) = %d, want at least 1 MiB", pid, rss)
		}
	}
	if _, err := Bytes(0, "NoSuchField"); err == nil {
		t.Error("Bytes of a missing field: no error")
	}
	before := CPU(0)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	if after := CPU(0); after <= before {
		t.Errorf("CPU after 50 ms of spinning %v, before %v: want an increase", after, before)
	}
	if RSS(1<<30) != 0 || CPU(1<<30) != 0 {
		t.Error("a process that does not exist: want 0")
	}
}

func TestSelfCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage checked on Linux")
	}
	// Spin until getrusage has counted 30 ms of CPU (a loaded machine
	// only stretches the wall time); it must get there, and agree with
	// /proc's 10 ms ticks.
	before := SelfCPU()
	deadline := time.Now().Add(20 * time.Second)
	for SelfCPU()-before < 30*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("SelfCPU grew by %v in 20 s of spinning", SelfCPU()-before)
		}
	}
	if d := SelfCPU() - CPU(0); d < -20*time.Millisecond || d > 20*time.Millisecond {
		t.Errorf("SelfCPU and CPU(0) differ by %v, want within 20 ms", d)
	}
}
