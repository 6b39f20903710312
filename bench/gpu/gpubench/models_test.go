package main

import (
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestModelOp drives the "model" op as bench/gpu/inference.sh's step 7
// does, on the generated tiny E5 model and ONNX Runtime on the CPU: a
// timing row per workload with positive numbers, provider cuda answering
// an error that names what is missing (this machine's ORT has no CUDA
// provider), and bad commands answering errors.
func TestModelOp(t *testing.T) {
	model := testutil.Model(t, "tiny")
	t.Setenv("ONNXRUNTIME_LIB", testutil.ORTLib(t))
	rows := serveCPU(t,
		`{"op": "model", "kind": "e5", "name": "e5-tiny", "model": "`+model+`", "provider": "cpu", "mode": "fp32 export", "workloads": [[4, 8], [1, 16]], "seconds": 0.2}`,
		`{"op": "model", "kind": "e5", "name": "e5-tiny", "model": "`+model+`", "provider": "cuda", "workloads": []}`,
		`{"op": "model", "kind": "bert", "model": "`+model+`"}`,
		`{"op": "model", "kind": "e5", "model": "`+model+`", "provider": "cpu", "workloads": [[0, 8]]}`,
		`{"op": "quit"}`)
	if len(rows) != 5 {
		t.Fatalf("%d answers, want 5: %v", len(rows), rows)
	}
	r := rows[0]
	timing, _ := r["rows"].([]any)
	if r["error"] != nil || r["device"] != "cpu" || len(timing) != 2 {
		t.Fatalf("cpu model: %v", r)
	}
	for _, x := range timing {
		row := x.(map[string]any)
		if row["impl"] != "onnxruntime-cpu" || row["mode"] != "fp32 export" || !(row["items_per_s"].(float64) > 0) || !(row["median_ms"].(float64) > 0) {
			t.Errorf("timing row %v", row)
		}
	}
	if e, _ := rows[1]["error"].(string); !strings.Contains(e, "CUDA execution provider is unavailable") || !strings.Contains(e, "make gpu-setup") {
		t.Errorf("cuda without its provider: %v", rows[1])
	}
	if e, _ := rows[2]["error"].(string); !strings.Contains(e, `"kind"`) {
		t.Errorf("bad kind: %v", rows[2])
	}
	if e, _ := rows[3]["error"].(string); !strings.Contains(e, "workload") {
		t.Errorf("bad workload: %v", rows[3])
	}
}
