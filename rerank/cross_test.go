package rerank

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

func bertTokenizerPath(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(testutil.RepoRoot(tb), ".cache", "tokenizers", "bert-uncased.json")
	if _, err := os.Stat(p); err != nil {
		testutil.RequireNative(tb, "BERT tokenizer "+p)
	}
	return p
}

// crossModel generates the tiny BERT cross-encoder with labels classes.
func crossModel(tb testing.TB, labels int) string {
	tb.Helper()
	return genModel(tb, "gen_bert.py", "--preset", "tiny", "--head", "classifier", "--num-labels", fmt.Sprint(labels),
		"--seed", "1", "--tokenizer", bertTokenizerPath(tb))
}

// oraclePairs returns HF tokenizers' (ids, type ids) for sentence pairs
// with truncation at maxLen.
func oraclePairs(tb testing.TB, tokPath string, pairs [][2]string, maxLen int) [][2][]int32 {
	tb.Helper()
	req := map[string]any{"tokenizer": tokPath, "max_len": maxLen}
	var ps [][2]string
	for _, p := range pairs {
		ps = append(ps, [2]string{base64.StdEncoding.EncodeToString([]byte(p[0])), base64.StdEncoding.EncodeToString([]byte(p[1]))})
	}
	req["pairs"] = ps
	var resp struct {
		IDs [][2][]int32 `json:"ids"`
	}
	testutil.OracleEncodeJSON(tb, req, &resp)
	return resp.IDs
}

// TestCrossEncoderPairTokens compares [CLS] q [SEP] p [SEP] with token
// types and longest_first truncation against Hugging Face tokenizers.
func TestCrossEncoderPairTokens(t *testing.T) {
	dir := crossModel(t, 1)
	long := strings.Repeat("passage words go on ", 60)
	pairs := [][2]string{
		{"what is a bridge?", "A bridge is a structure built to span a physical obstacle."},
		{"", "empty query"}, {"empty passage", ""}, {"", ""},
		{strings.Repeat("long query ", 40), long}, {"short", long}, {long, "short"},
		{strings.Repeat("q ", 30), strings.Repeat("p ", 31)}, {"Héllo WORLD 北京", "naïve café 😀 [SEP] [CLS]"},
	}
	for _, maxLen := range []int{512, 64, 33, 10, 4, 3} {
		t.Run(fmt.Sprint(maxLen), func(t *testing.T) {
			r := openTest(t, Config{Dir: dir, Sessions: 1, MaxLength: maxLen})
			want := oraclePairs(t, bertTokenizerPath(t), pairs, maxLen)
			for i, p := range pairs {
				ids, types := r.encodePair(p[0], p[1])
				if !slices.Equal(ids, want[i][0]) || !slices.Equal(types, want[i][1]) {
					t.Errorf("pair %d (max %d):\ngot  %v %v\nwant %v %v", i, maxLen, ids, types, want[i][0], want[i][1])
				}
			}
		})
	}
}

func TestCrossEncoderMatchesReference(t *testing.T) {
	for _, labels := range []int{1, 2} {
		t.Run(fmt.Sprintf("labels=%d", labels), func(t *testing.T) {
			dir := crossModel(t, labels)
			r := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 8})
			query := "who built the bridges of paris?"
			docs := testDocs(10)
			scores, err := r.score(context.Background(), query, docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			req := struct {
				IDs   [][]int32 `json:"input_ids"`
				Types [][]int32 `json:"token_type_ids"`
			}{}
			for _, d := range docs {
				ids, types := r.encodePair(query, d)
				req.IDs = append(req.IDs, ids)
				req.Types = append(req.Types, types)
			}
			var resp struct {
				Logits [][]float64 `json:"logits"`
			}
			testutil.RunReference(t, "gen_bert.py", dir, req, &resp)
			worst := 0.0
			defer func() { t.Logf("labels=%d: %d pairs, max |score(go) - score(numpy)| = %.2g", labels, len(docs), worst) }()
			for i := range docs {
				l := resp.Logits[i]
				want := l[0]
				if labels == 2 { // softmax, probability of label 1
					want = 1 / (1 + math.Exp(l[0]-l[1]))
				}
				d := math.Abs(float64(scores[i]) - want)
				worst = max(worst, d)
				if d > 1e-4*max(1, math.Abs(want)) {
					t.Errorf("doc %d: go %.6f numpy %.6f", i, scores[i], want)
				}
			}
			if slices.Min(scores) == slices.Max(scores) {
				t.Errorf("constant scores %v", scores)
			}
		})
	}
}

func TestPairTruncation(t *testing.T) {
	for _, tc := range []struct{ n1, n2, target, w1, w2 int }{
		{3, 4, 10, 3, 4}, {10, 2, 5, 3, 2}, {2, 10, 5, 2, 3}, {10, 10, 5, 2, 3}, {10, 11, 5, 2, 3},
		{11, 10, 5, 3, 2}, {0, 9, 4, 0, 4}, {5, 5, 0, 0, 0}, {7, 3, 9, 6, 3},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			g1, g2 := pairTruncation(tc.n1, tc.n2, tc.target)
			if g1 != tc.w1 || g2 != tc.w2 {
				t.Errorf("pairTruncation(%d, %d, %d) = %d, %d; want %d, %d", tc.n1, tc.n2, tc.target, g1, g2, tc.w1, tc.w2)
			}
		})
	}
}

func TestCrossEncoderMaxLengthBeyondPositions(t *testing.T) {
	dir := crossModel(t, 1)
	r, err := Open(Config{Dir: dir, ORTLib: testutil.ORTLib(t), Sessions: 1, MaxLength: 600})
	if err == nil {
		r.Close()
		t.Fatal("Open accepted MaxLength 600 for a 512-position BERT")
	}
}
