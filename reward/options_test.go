package reward

import (
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestParamConvention: a weight or factor of SearchP1Config and
// ProRetrievalConfig is its default at 0, a literal 0 at rlsearch.Off (any
// negative value), itself otherwise (the options convention,
// rlsearch.Off); so are OpenAIConfig.MaxRetries (0 = DefaultJudgeRetries,
// Off = none).
func TestParamConvention(t *testing.T) {
	for _, tc := range []struct{ v, def, want float64 }{
		{0, DefaultLambdaPath, DefaultLambdaPath},
		{rlsearch.Off, DefaultLambdaPath, 0},
		{-0.25, DefaultDecay, 0},
		{0.7, DefaultAlpha, 0.7},
	} {
		if got := Param(tc.v, tc.def); got != tc.want {
			t.Errorf("Param(%v, %v) = %v, want %v", tc.v, tc.def, got, tc.want)
		}
	}
	def, err := NewSearchP1(SearchP1Config{})
	if err != nil {
		t.Fatal(err)
	}
	if def.lf != DefaultLambdaFormat || def.lp != DefaultLambdaPath || def.la != DefaultLambdaOutcome || def.al != DefaultAlpha || def.decay != DefaultDecay {
		t.Errorf("zero SearchP1Config: %v %v %v %v %v, want the defaults", def.lf, def.lp, def.la, def.al, def.decay)
	}
	off, err := NewSearchP1(SearchP1Config{LambdaFormat: rlsearch.Off, LambdaPath: rlsearch.Off, LambdaOutcome: rlsearch.Off, Alpha: rlsearch.Off, Decay: rlsearch.Off})
	if err != nil {
		t.Fatal(err)
	}
	if off.lf != 0 || off.lp != 0 || off.la != 0 || off.al != 0 || off.decay != 0 {
		t.Errorf("Off SearchP1Config: %v %v %v %v %v, want zeros", off.lf, off.lp, off.la, off.al, off.decay)
	}
	pr, err := NewProRetrieval(ProRetrievalConfig{WeightExec: rlsearch.Off})
	if err != nil {
		t.Fatal(err)
	}
	if pr.wf != DefaultWeightFormat || pr.we != 0 {
		t.Errorf("ProRetrieval weights format %v exec %v, want the default %v and 0 (Off)", pr.wf, pr.we, DefaultWeightFormat)
	}
}

// TestJudgeRetriesConvention: OpenAIConfig.MaxRetries 0 is
// DefaultJudgeRetries, rlsearch.Off (any negative value) none.
func TestJudgeRetriesConvention(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, DefaultJudgeRetries}, {rlsearch.Off, 0}, {-3, 0}, {2, 2}} {
		j, err := NewOpenAIJudge(OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if j.cfg.MaxRetries != tc.want {
			t.Errorf("MaxRetries %d: %d retries, want %d", tc.in, j.cfg.MaxRetries, tc.want)
		}
	}
}
