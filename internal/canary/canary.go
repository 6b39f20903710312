// Package canary compares a model's outputs on a GPU path against the CPU
// reference before the GPU path serves (the startup model canary of embed
// and rerank): the same fixed inputs through both, the first input whose
// outputs differ beyond the bar named. It holds no model code: callers run
// the inputs and hand over the outputs.
package canary

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrMismatch is wrapped by every failed comparison: the GPU path's output
// for some input differs from the CPU reference's beyond the bar.
var ErrMismatch = errors.New("model canary: the GPU path's output differs from the CPU reference")

// Bars.
const (
	// MinCosine is the least cosine similarity between an embedding on the
	// GPU path and on the CPU reference (issue 32; the fp16 forward pass
	// measured 0.9999+ against PyTorch fp32 on the emulator and in
	// transformer.TestDeviceParity).
	MinCosine = 0.999
	// MaxScoreDelta is the largest |Δ score| between a reranker score on
	// the GPU path and on the CPU reference, relative above 1
	// (ScoreTolerance). Qwen3-Reranker scores are P(yes) = σ(d), d the
	// logit difference yes − no, and dP/dd = P(1−P) ≤ 1/4, so 2e-3 admits
	// |Δd| up to 8e-3: 16 units of fp16 rounding (2^-11 ≈ 4.9e-4) on an
	// O(1) logit difference, the error that fp16 activations with fp32
	// accumulation and an fp32 residual stream leave after the 28 layers
	// of the 0.6B shape (the bar the device parity check holds against
	// PyTorch fp32). A wrong kernel moves a score by far more: the faults
	// the tests inject move P(yes) by ≥ 0.05.
	MaxScoreDelta = 2e-3
)

// ScoreTolerance is the bar for one score: MaxScoreDelta, times |ref| when
// |ref| > 1 (raw cross-encoder logits, where fp16 rounding is relative).
func ScoreTolerance(ref float32) float64 { return MaxScoreDelta * max(1, math.Abs(float64(ref))) }

// Report is what a canary found, for logs and /healthz.
type Report struct {
	// What names the canary in String: "" is "model canary" (embed,
	// rerank); package ann's is "search canary".
	What string `json:"-"`
	// Ran is false when the canary was skipped (Skipped says why) or the
	// model serves on the CPU.
	Ran     bool   `json:"ran"`
	Skipped string `json:"skipped,omitempty"`
	Passed  bool   `json:"passed"`
	// Path is the GPU path checked ("gpu:0", "cuda:0"); Reference the CPU
	// side ("onnxruntime-cpu" or "go-fp32-reference").
	Path      string `json:"path,omitempty"`
	Reference string `json:"reference,omitempty"`
	Inputs    int    `json:"inputs,omitempty"`
	// Measure names Value and Bar: "min cosine" or "max |Δ score|".
	Measure string  `json:"measure,omitempty"`
	Value   float64 `json:"value"`
	Bar     float64 `json:"bar,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	Failure string  `json:"failure,omitempty"`
}

// SkippedByConfig is the report of a model canary that Config.SkipCanary
// (--model-canary=false) turned off; it appends the report's line to
// *reason (the placement reason, "; "-separated).
func SkippedByConfig(reason *string) Report {
	r := Report{Skipped: "turned off: Config.SkipCanary (--model-canary=false)"}
	*reason += "; " + r.String()
	return r
}

// Conclude records a finished comparison on r: Value and the Seconds since
// t0, then Failure when err (the comparison's error) is not nil, else
// Passed, with the report's line appended to *reason as in
// SkippedByConfig. It returns err.
func (r *Report) Conclude(t0 time.Time, value float64, err error, reason *string) error {
	r.Value = value
	r.Seconds = time.Since(t0).Seconds()
	if err != nil {
		r.Failure = err.Error()
		return err
	}
	r.Passed = true
	*reason += "; " + r.String()
	return nil
}

// String is the report in one line.
func (r Report) String() string {
	what := r.What
	if what == "" {
		what = "model canary"
	}
	switch {
	case !r.Ran && r.Skipped != "":
		return what + " skipped (" + r.Skipped + ")"
	case !r.Ran:
		return "no " + what
	case r.Passed:
		return fmt.Sprintf(what+" passed: %d inputs on %s vs %s, %s %.6g (bar %g), %.2f s", r.Inputs, r.Path, r.Reference, r.Measure, r.Value, r.Bar, r.Seconds)
	}
	return fmt.Sprintf(what+" FAILED on %s vs %s: %s", r.Path, r.Reference, r.Failure)
}

// Embeddings compares got and want, [len(names), dim] row-major each:
// every row of got must be finite and have cosine ≥ MinCosine with the row
// of want (a zero row only matches a zero row: an empty text). It returns
// the least cosine over the rows and, on a mismatch, an error wrapping
// ErrMismatch naming the first differing input.
func Embeddings(got, want []float32, dim int, names []string) (float64, error) {
	if len(want) != len(names)*dim {
		return 0, fmt.Errorf("canary: reference has %d values for %d inputs of dim %d", len(want), len(names), dim)
	}
	if len(got) != len(want) {
		return 0, fmt.Errorf("%w: %d values for %d inputs of dim %d, the reference %d", ErrMismatch, len(got), len(names), dim, len(want))
	}
	worst := 1.0
	for i, name := range names {
		g, w := got[i*dim:(i+1)*dim], want[i*dim:(i+1)*dim]
		var gg, ww, gw float64
		for d := range g {
			x, y := float64(g[d]), float64(w[d])
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, fmt.Errorf("%w: input %d (%s): value %d is %v", ErrMismatch, i, name, d, g[d])
			}
			gg += x * x
			ww += y * y
			gw += x * y
		}
		var c float64
		switch {
		case gg == 0 && ww == 0:
			c = 1
		case gg == 0 || ww == 0:
			c = 0
		default:
			c = gw / math.Sqrt(gg*ww)
		}
		worst = min(worst, c)
		if !(c >= MinCosine) {
			return worst, fmt.Errorf("%w: input %d (%s): cosine %.6f to the reference, below %g", ErrMismatch, i, name, c, MinCosine)
		}
	}
	return worst, nil
}

// Scores compares got and want, one score per input: every score of got
// must be finite and within ScoreTolerance of want's. It returns the
// largest |Δ| and, on a mismatch, an error wrapping ErrMismatch naming the
// first differing input.
func Scores(got, want []float32, names []string) (float64, error) {
	if len(want) != len(names) {
		return 0, fmt.Errorf("canary: reference has %d scores for %d inputs", len(want), len(names))
	}
	if len(got) != len(want) {
		return 0, fmt.Errorf("%w: %d scores for %d inputs", ErrMismatch, len(got), len(names))
	}
	var worst float64
	for i, name := range names {
		x := float64(got[i])
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return worst, fmt.Errorf("%w: input %d (%s): score %v", ErrMismatch, i, name, got[i])
		}
		d := math.Abs(x - float64(want[i]))
		worst = max(worst, d)
		if d > ScoreTolerance(want[i]) {
			return worst, fmt.Errorf("%w: input %d (%s): score %.6g, the reference %.6g (|Δ| %.3g above %.3g)", ErrMismatch, i, name, got[i], want[i], d, ScoreTolerance(want[i]))
		}
	}
	return worst, nil
}
