package embed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestProviderValidate(t *testing.T) {
	for _, tc := range []struct {
		p  string
		ok bool
	}{{"", true}, {"cpu", true}, {"cuda", true}, {"cuda:1", true}, {"cuda:-1", false}, {"gpu", true}, {"gpu:1", true},
		{"auto", true}, {"gpu:-1", false}, {"gpux", false}, {"cuda:x", false}} {
		t.Run(tc.p, func(t *testing.T) {
			err := Config{Dir: "m", Provider: tc.p}.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate(Provider %q) = %v, want ok=%v", tc.p, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "Config.Provider") {
				t.Fatalf("error %v does not name Config.Provider", err)
			}
		})
	}
}

// TestEncoderCUDAFallback asks for ORT's CUDA execution provider. With the
// CPU-only ORT that setup.sh installs it must log why and fall back to the
// CPU, giving the CPU encoder's exact output; with a CUDA-enabled ORT on a
// GPU machine the output must agree with the CPU to 1e-3.
func TestEncoderCUDAFallback(t *testing.T) {
	dir := encGenModel(t, "tiny")
	var mu sync.Mutex
	var logs []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	gpu := encOpen(t, Config{Dir: dir, Provider: "cuda", Sessions: 2, Logf: logf})
	cpu := encOpen(t, Config{Dir: dir, Sessions: 1})
	if cpu.Provider() != "cpu" {
		t.Fatalf("default provider %q, want cpu", cpu.Provider())
	}
	texts := []string{"who wrote the iliad", "capital of france", ""}
	a, err := gpu.EncodeQueries(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cpu.EncodeQueries(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	switch gpu.Provider() {
	case "cpu":
		if len(logs) == 0 || !strings.Contains(logs[0], "CUDA execution provider unavailable") {
			t.Fatalf("fell back to the CPU without a logged reason: %q", logs)
		}
		t.Logf("fallback logged: %s", logs[0])
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("fallback output differs from the CPU encoder at %d: %v vs %v", i, a[i], b[i])
			}
		}
	case "cuda:0":
		t.Logf("ORT CUDA execution provider active")
		for i := range a {
			if d := a[i] - b[i]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("CUDA output differs from the CPU at %d: %v vs %v", i, a[i], b[i])
			}
		}
	default:
		t.Fatalf("Provider() = %q", gpu.Provider())
	}
}
