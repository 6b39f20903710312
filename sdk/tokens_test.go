package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// qwen3 loads the Qwen3 tokenizer that scripts/setup.sh fetches, or skips.
func qwen3(t *testing.T) *tokenizer.BPE {
	t.Helper()
	tok, err := tokenizer.LoadBPE(filepath.Join("..", tokenizer.DefaultQwen3Tokenizer))
	if err != nil {
		t.Skipf("Qwen3 tokenizer not available (run scripts/setup.sh): %v", err)
	}
	return tok
}

// TestBoundTokensAgainstQwen3 measures BoundTokens against the real Qwen3
// tokenizer on 2,000 wiki passages and on hostile strings: the estimate is
// never below a quarter of Qwen3's count (the documented bound), and the
// ratios are logged.
func TestBoundTokensAgainstQwen3(t *testing.T) {
	tok := qwen3(t)
	f, err := os.Open(filepath.Join(testutil.DataDir(t), "wiki_multihop", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && len(texts) < 2000 {
		var rec struct{ Contents string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, rec.Contents)
	}
	var est, real int
	minRatio, maxRatio := 1e9, 0.0
	for _, s := range texts {
		e, r := BoundTokens{}.CountTokens(s), tok.CountTokens(s)
		est += e
		real += r
		minRatio = min(minRatio, float64(e)/float64(r))
		maxRatio = max(maxRatio, float64(e)/float64(r))
		if 4*e < r {
			t.Fatalf("estimate %d < real %d / 4 for %q", e, r, s)
		}
	}
	t.Logf("wiki passages (%d): estimate/Qwen3 = %.3f overall, per passage %.3f–%.3f", len(texts), float64(est)/float64(real), minRatio, maxRatio)
	rng := rand.New(rand.NewPCG(1, 2))
	randStr := func(alphabet []rune, n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	hostile := map[string]string{
		"x*10000":        strings.Repeat("x", 10000),
		"digits":         randStr([]rune("0123456789"), 5000),
		"random letters": randStr([]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), 5000),
		"random ascii":   randStr([]rune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~abcXYZ019 "), 5000),
		"cjk":            randStr([]rune("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"), 3000),
		"rare unicode":   randStr([]rune("ꙮ𓀀𒀀ᚠᛉ⿰⿱㐀䶵𠀀𪛖"), 2000),
		"spaces":         strings.Repeat(" ", 10000),
		"newlines":       strings.Repeat("\n", 5000),
		"repeated word":  strings.Repeat("the ", 3000),
		"base64-like":    randStr([]rune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"), 5000),
		"emoji":          randStr([]rune("😀😃😄😁😆🙂🙃😉😊😇"), 2000),
		"mixed hex":      randStr([]rune("0123456789abcdef"), 5000),
	}
	for name, s := range hostile {
		e, r := BoundTokens{}.CountTokens(s), tok.CountTokens(s)
		t.Logf("%-15s bytes %6d  Qwen3 %6d  estimate %6d  ratio %.2f", name, len(s), r, e, float64(e)/float64(r))
		if 4*e < r {
			t.Fatalf("%s: estimate %d < real %d / 4", name, e, r)
		}
	}
}

// TestTokenCapHoldsByDefault is issue 13's last program row: with the
// default counter the observation stays within the 2,048-token cap, also by
// the real Qwen3 count when the tokenizer is available.
func TestTokenCapHoldsByDefault(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	for _, src := range []string{
		"for i in range(20000):\n    print(\"x\" * 10000)",
		"for i in range(20000):\n    print(\"1234567890\" * 100)",
		"print(\"的\" * 100000)",
	} {
		res := rt.Run(context.Background(), Request{Code: src}, nil)
		if res.Code != CodeBudget || !strings.Contains(res.Error, "observation budget exceeded") {
			t.Fatalf("%q: got %s %q", src, res.Code, res.Error)
		}
		printed := strings.TrimSuffix(res.Observation, rt.errorLine(res.Code, res.Error))
		if n := (BoundTokens{}).CountTokens(printed); n > DefaultMaxObservationTokens || res.Stats.PrintedTokens > DefaultMaxObservationTokens {
			t.Fatalf("%q: %d tokens printed (stats %d), over the cap", src, n, res.Stats.PrintedTokens)
		}
		if tok, err := tokenizer.LoadBPE(filepath.Join("..", tokenizer.DefaultQwen3Tokenizer)); err == nil {
			if n := tok.CountTokens(printed); n > DefaultMaxObservationTokens {
				t.Fatalf("%q: %d Qwen3 tokens printed, over the cap", src, n)
			}
		}
	}
}
