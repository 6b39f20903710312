package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/rerank"
)

// modelCmd is the "model" op's own fields (cmd holds the shared ones).
type modelCmd struct {
	Kind      string   `json:"kind"`       // "e5" or "qwen3"
	Name      string   `json:"name"`       // the model's row name: "e5-base", "qwen3-reranker-0.6b"
	ORTLib    string   `json:"ort_lib"`    // ONNX Runtime library (default $ONNXRUNTIME_LIB)
	Parity    string   `json:"parity"`     // inference.py build's directory (parity_inputs.json, torch_ref.json), or ""
	Workloads [][2]int `json:"workloads"`  // (items, tokens) per timed call
	MaxLength int      `json:"max_length"` // the model's token budget (default 512 for e5, 8192 for qwen3)
	Canary    *bool    `json:"canary"`     // the model canary (default on)
	Mode      string   `json:"mode"`       // the rows' mode: "fp16" (ours), "fp16 export", "fp32 export"
}

// modelBench is the "model" op: one model opened through the serving code
// (embed.Open / rerank.Open, so the startup model canary runs as in
// production) on one provider — "gpu" (our fp16 forward pass), "cuda"
// (ONNX Runtime's CUDA execution provider) or "cpu" — then parity against
// PyTorch fp32 on inference.py's inputs (E5: min cosine; Qwen3: max
// |ΔP(yes)|) and end-to-end timing of the workloads (ids in, vectors or
// P(yes) out: EmbedIDs / ScoreIDs), median of the calls after warm-ups.
// Errors (e.g. cuda without its libraries) come back as the answer's
// "error", naming what is missing.
func (b *bench) modelBench(line []byte, c cmd) (map[string]any, error) {
	var m modelCmd
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if c.Model == "" || (m.Kind != "e5" && m.Kind != "qwen3") {
		return nil, errors.New(`model: "model" (a directory) and "kind" ("e5" or "qwen3") are required`)
	}
	for _, w := range m.Workloads {
		if w[0] < 1 || w[0] > maxBatch || w[1] < 1 || w[1] > 1<<16 {
			return nil, fmt.Errorf(`model: workload %v: items must be in [1, %d] and tokens in [1, 65536]`, w, maxBatch)
		}
	}
	provider := or2(c.Provider, "gpu")
	skip := m.Canary != nil && !*m.Canary
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "gpubench: "+f+"\n", a...) }
	res := map[string]any{"kind": m.Kind, "name": m.Name, "model": c.Model, "provider": provider}
	ctx := context.Background()
	t0 := time.Now()
	var run func(ids [][]int32) error
	var placement func() (string, string)
	var parity func(in parityFile, ref torchFile) map[string]any
	var vocab int
	switch m.Kind {
	case "e5":
		enc, err := embed.Open(embed.Config{Dir: c.Model, Provider: provider, ORTLib: m.ORTLib, MaxLength: or(m.MaxLength, 512), BatchSize: 512,
			SkipCanary: skip, Logf: logf})
		if err != nil {
			return nil, err
		}
		defer enc.Close()
		res["canary"] = enc.CanaryReport()
		placement, vocab = enc.Placement, 30522
		run = func(ids [][]int32) error { _, err := enc.EmbedIDs(ctx, ids); return err }
		parity = func(in parityFile, ref torchFile) map[string]any {
			got, err := enc.EmbedIDs(ctx, in.Bert.IDs)
			if err != nil {
				return map[string]any{"error": err.Error()}
			}
			d, minCos := enc.Dim(), 1.0
			for i := range in.Bert.IDs {
				minCos = min(minCos, cos64(got[i*d:(i+1)*d], ref.Bert.Embeddings[i]))
			}
			return map[string]any{"min_cosine_vs_torch_fp32": minCos, "inputs": len(in.Bert.IDs), "pass": minCos >= 0.999}
		}
	case "qwen3":
		rr, err := rerank.Open(rerank.Config{Dir: c.Model, Provider: provider, ORTLib: m.ORTLib, MaxLength: or(m.MaxLength, 8192), BatchSize: 256,
			MaxBatchTokens: 1 << 17, BatchWait: -1, SkipCanary: skip, Logf: logf})
		if err != nil {
			return nil, err
		}
		defer rr.Close()
		res["canary"] = rr.CanaryReport()
		placement, vocab = rr.Placement, 151669
		run = func(ids [][]int32) error { _, err := rr.ScoreIDs(ctx, ids); return err }
		parity = func(in parityFile, ref torchFile) map[string]any {
			got, err := rr.ScoreIDs(ctx, in.Qwen.IDs)
			if err != nil {
				return map[string]any{"error": err.Error()}
			}
			var worst float64
			for i := range in.Qwen.IDs {
				p := 1 / (1 + math.Exp(ref.Qwen.Logits[i][0]-ref.Qwen.Logits[i][1]))
				worst = max(worst, math.Abs(float64(got[i])-p))
			}
			return map[string]any{"max_abs_p_yes_vs_torch_fp32": worst, "inputs": len(in.Qwen.IDs), "pass": worst <= 2e-3}
		}
	}
	res["open_s"] = time.Since(t0).Seconds()
	res["device"], res["placement"] = placement()
	if m.Parity != "" {
		var in parityFile
		var ref torchFile
		if err := readJSONFile(filepath.Join(m.Parity, "parity_inputs.json"), &in); err != nil {
			return nil, err
		}
		if err := readJSONFile(filepath.Join(m.Parity, "torch_ref.json"), &ref); err != nil {
			return nil, err
		}
		res["parity"] = parity(in, ref)
	}
	rows := []map[string]any{}
	x := uint64(42)
	for _, w := range m.Workloads {
		n, seq := w[0], w[1]
		ids := make([][]int32, n)
		for i := range ids {
			ids[i] = make([]int32, seq)
			for j := range ids[i] {
				ids[i][j] = int32(1000 + splitmix64(&x)%uint64(vocab-1000))
			}
		}
		warm, minIters := 3, 10
		if m.Kind == "qwen3" {
			warm, minIters = 1, 3
		}
		var ms []float64
		start := time.Now()
		for i := -warm; i < minIters || (time.Since(start) < time.Duration(or(c.Seconds, 2.0)*float64(time.Second)) && i < 200); i++ {
			s := time.Now()
			if err := run(ids); err != nil {
				return nil, err
			}
			if i >= 0 {
				ms = append(ms, float64(time.Since(s).Microseconds())/1000)
			} else {
				start = time.Now()
			}
		}
		slices.Sort(ms)
		med := ms[len(ms)/2]
		rows = append(rows, map[string]any{"impl": implName(provider), "mode": or2(m.Mode, "fp16"), "model": m.Name, "workload": workloadName(m.Kind, n),
			"batch": n, "seq": seq, "items_per_s": float64(n) / med * 1000, "median_ms": med, "p90_ms": ms[len(ms)*9/10], "iters": len(ms)})
	}
	res["rows"] = rows
	return res, nil
}

// implName is the report's engine name of a provider.
func implName(provider string) string {
	switch {
	case strings.HasPrefix(provider, "cuda"):
		return "onnxruntime-cuda"
	case strings.HasPrefix(provider, "gpu"):
		return "rlsearch"
	}
	return "onnxruntime-" + provider
}

// workloadName matches transformer.TestDeviceTiming's workload names.
func workloadName(kind string, n int) string {
	switch {
	case kind == "qwen3":
		return "pairs"
	case n == 1:
		return "one query"
	case n >= 512:
		return "queries"
	}
	return "passages"
}

func or2(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// parityFile and torchFile are inference.py build's parity_inputs.json and
// torch_ref.json (transformer/device_test.go reads the same).
type parityFile struct {
	Bert struct {
		IDs [][]int32 `json:"ids"`
	} `json:"bert"`
	Qwen struct {
		IDs [][]int32 `json:"ids"`
	} `json:"qwen"`
}

type torchFile struct {
	Bert struct {
		Embeddings [][]float64 `json:"embeddings"`
	} `json:"bert"`
	Qwen struct {
		Logits [][2]float64 `json:"logits"`
	} `json:"qwen"`
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func cos64(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}
