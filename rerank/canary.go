package rerank

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/transformer"
)

// canaryPairs is the model canary's fixed sample (Config.Provider): a
// relevant and an irrelevant document for each query, a longer document
// and an empty one, scored with the reranker's own prompt and MaxLength.
var canaryPairs = [][2]string{
	{"who wrote the iliad", "\"Iliad\"\nThe Iliad is an ancient Greek epic poem traditionally attributed to Homer."},
	{"who wrote the iliad", "\"Basalt\"\nBasalt is a fine-grained volcanic rock formed from the rapid cooling of lava."},
	{"what is the capital of france", "\"Paris\"\nParis is the capital and largest city of France, on the Seine."},
	{"what is the capital of france", "\"Apollo 11\"\nApollo 11 was the first crewed Moon landing, on 20 July 1969."},
	{"how do vaccines train the immune system", "\"Vaccine\"\n" + strings.Repeat("A vaccine provides active acquired immunity to an infectious disease: "+
		"it contains an agent resembling the microorganism, which the immune system learns to recognize and destroy. ", 3)},
	{"how do vaccines train the immune system", ""},
}

// runCanary scores canaryPairs on r (a GPU path, its queue running) and on
// the CPU reference, and compares them (canary.Scores). It sets r.canary
// and extends r.reason; the error wraps canary.ErrMismatch on a mismatch.
func (r *Reranker) runCanary() error {
	if r.cfg.SkipCanary {
		r.canary = canary.SkippedByConfig(&r.reason)
		return nil
	}
	t0 := time.Now()
	names := make([]string, len(canaryPairs))
	got := make([]float32, len(canaryPairs))
	for i, p := range canaryPairs {
		names[i] = fmt.Sprintf("pair %q / %.40q", p[0], p[1])
		s, err := r.score(context.Background(), p[0], []string{p[1]}, nil)
		if err != nil {
			return fmt.Errorf("rerank: model canary on %s: %w", r.provider, err)
		}
		got[i] = s[0]
	}
	want, ref, err := r.canaryReference()
	if err != nil {
		return fmt.Errorf("rerank: model canary reference for %s: %w", r.provider, err)
	}
	r.canary = canary.Report{Ran: true, Path: r.provider, Reference: ref, Inputs: len(canaryPairs), Measure: "max |Δ score|", Bar: canary.MaxScoreDelta}
	v, err := canary.Scores(got, want, names)
	if err := r.canary.Conclude(t0, v, err, &r.reason); err != nil {
		return fmt.Errorf("rerank: %s on %s: %w", r.model.Name, r.provider, err)
	}
	return nil
}

// canaryReference scores canaryPairs on the CPU: ONNX Runtime over
// model.onnx when the directory has it and ONNX Runtime loads, else (a
// Qwen3-Reranker) package transformer's float32 Go forward pass.
func (r *Reranker) canaryReference() ([]float32, string, error) {
	why := ortenv.Unusable(r.cfg.Dir, ModelFile, r.cfg.ORTLib)
	if why == nil {
		cpu, err := Open(Config{Dir: r.cfg.Dir, ORTLib: r.cfg.ORTLib, Sessions: 1, IntraOpThreads: runtime.GOMAXPROCS(0), MaxLength: r.cfg.MaxLength,
			Instruction: r.cfg.Instruction, BatchWait: -1, MaxLogitsBytes: r.cfg.MaxLogitsBytes, Provider: "cpu", Logf: r.cfg.Logf})
		if err != nil {
			return nil, "", err
		}
		defer cpu.Close()
		want := make([]float32, len(canaryPairs))
		for i, p := range canaryPairs {
			s, err := cpu.score(context.Background(), p[0], []string{p[1]}, nil)
			if err != nil {
				return nil, "", err
			}
			want[i] = s[0]
		}
		return want, "onnxruntime-cpu", nil
	}
	if r.model.Kind != KindQwen3 {
		return nil, "", fmt.Errorf("no ONNX Runtime reference for a %s: %v", r.model.Kind, why)
	}
	tc, w, err := transformer.LoadReference(r.cfg.Dir, transformer.TypeQwen3, why)
	if err != nil {
		return nil, "", err
	}
	defer w.Close()
	ref := transformer.NewQwen3Ref(*tc.Qwen3, w)
	want := make([]float32, len(canaryPairs))
	for i, p := range canaryPairs {
		ids, _ := r.encodePair(p[0], p[1])
		l := ref.LastLogits(ids, []int32{r.noID, r.yesID})
		want[i] = transformer.YesProbability(l[0], l[1])
	}
	return want, "go-fp32-reference", nil
}

// CanaryReport is the startup model canary's outcome (Config.Provider):
// Ran false on the CPU or when skipped; after auto fell back to the CPU,
// the failed GPU canary.
func (r *Reranker) CanaryReport() canary.Report { return r.canary }
