package canary

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestEmbeddings: identical and fp16-rounded rows pass; a wrong value, a
// dropped row (the rows after it shifted up), a NaN, a zero row and a
// short output fail, naming the first differing input.
func TestEmbeddings(t *testing.T) {
	const dim = 8
	names := []string{"q0", "q1", "p0", "empty"}
	want := make([]float32, len(names)*dim)
	for i := range 3 * dim { // the last row stays zero: an empty text
		want[i] = float32(math.Sin(float64(i)*0.7 + 0.3))
	}
	clone := func(f func(g []float32) []float32) []float32 { return f(append([]float32(nil), want...)) }
	pass := map[string][]float32{
		"same": want,
		"fp16 rounding": clone(func(g []float32) []float32 {
			for i := range g {
				g[i] *= 1 + 4.9e-4*float32(i%3-1)
			}
			return g
		}),
	}
	for name, got := range pass {
		if c, err := Embeddings(got, want, dim, names); err != nil || c < MinCosine {
			t.Errorf("%s: %v, %v", name, c, err)
		}
	}
	fail := map[string]struct {
		got   []float32
		first string
	}{
		"wrong value":               {clone(func(g []float32) []float32 { g[dim+2] = -g[dim+2] * 3; return g }), "input 1 (q1)"},
		"dropped row":               {clone(func(g []float32) []float32 { copy(g[dim:], g[2*dim:]); clear(g[3*dim:]); return g }), "input 1 (q1)"},
		"NaN":                       {clone(func(g []float32) []float32 { g[2*dim+5] = float32(math.NaN()); return g }), "input 2 (p0)"},
		"zero row":                  {clone(func(g []float32) []float32 { clear(g[:dim]); return g }), "input 0 (q0)"},
		"nonzero for an empty text": {clone(func(g []float32) []float32 { g[3*dim] = 1; return g }), "input 3 (empty)"},
		"short":                     {want[:3*dim], "values for 4 inputs"},
	}
	for name, tc := range fail {
		_, err := Embeddings(tc.got, want, dim, names)
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.first) {
			t.Errorf("%s: %v, want ErrMismatch naming %q", name, err, tc.first)
		}
	}
}

// TestScores: scores within the bar pass (relative above 1); a wrong
// score, a swapped pair, a NaN and a missing score fail, naming the first.
func TestScores(t *testing.T) {
	names := []string{"a", "b", "c", "logit"}
	want := []float32{0.91, 0.12, 0.5, -7.5}
	if d, err := Scores([]float32{0.911, 0.1185, 0.5019, -7.51}, want, names); err != nil || d > 0.011 {
		t.Fatalf("within the bar: %v, %v", d, err)
	}
	for name, tc := range map[string]struct {
		got   []float32
		first string
	}{
		"wrong":   {[]float32{0.91, 0.17, 0.5, -7.5}, "input 1 (b)"},
		"swapped": {[]float32{0.12, 0.91, 0.5, -7.5}, "input 0 (a)"},
		"NaN":     {[]float32{0.91, 0.12, float32(math.NaN()), -7.5}, "input 2 (c)"},
		"logit":   {[]float32{0.91, 0.12, 0.5, -7.6}, "input 3 (logit)"},
		"missing": {[]float32{0.91, 0.12, 0.5}, "3 scores for 4 inputs"},
	} {
		if _, err := Scores(tc.got, want, names); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.first) {
			t.Errorf("%s: %v, want ErrMismatch naming %q", name, err, tc.first)
		}
	}
	r := Report{Ran: true, Passed: true, Path: "gpu:0", Reference: "onnxruntime-cpu", Inputs: 4, Measure: "max |Δ score|", Value: 1e-4, Bar: MaxScoreDelta}
	if s := r.String(); !strings.Contains(s, "passed") || !strings.Contains(s, "gpu:0") {
		t.Errorf("String: %s", s)
	}
}
