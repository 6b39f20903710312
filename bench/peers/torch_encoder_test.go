package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestTorchEncoderAgrees checks the dense peer's torch E5 encoder
// (e5_torch.py: its own WordPiece tokenizer and BertModel forward pass over
// model.safetensors) against ours (embed: our tokenizer, ONNX Runtime over
// model.onnx) on the same generated weights: the same token ids for every
// text, and embeddings within cosine 0.9999. Texts: 300 wiki_multihop
// questions and strings that exercise the normaliser and WordPiece (accents,
// CJK, added tokens written in the text, a word over 100 characters,
// control characters, emoji, a compatibility ligature).
func TestTorchEncoderAgrees(t *testing.T) {
	requirePython(t, "torch", "numpy")
	if testing.Short() {
		t.Skip("generates a model and runs torch")
	}
	root := testutil.RepoRoot(t)
	tok := filepath.Join(root, ".cache", "tokenizers", "bert-uncased.json")
	if _, err := os.Stat(tok); err != nil {
		testutil.RequireNative(t, "tokenizer "+tok)
	}
	dir := testutil.GenModel(t, "model", "gen_bert.py", "--tokenizer", tok, "--preset", "tiny", "--seed", "1",
		"--safetensors", "f32")
	lib := os.Getenv("ONNXRUNTIME_LIB")
	if lib == "" {
		lib = filepath.Join(root, ".cache", "ort", "libonnxruntime.so.1")
	}
	if _, err := os.Stat(lib); err != nil {
		testutil.RequireNative(t, "ONNX Runtime ("+lib+")")
	}

	qs, err := readQuestions(filepath.Join(testutil.DataDir(t), "wiki_multihop", "questions.jsonl"), 300)
	if err != nil {
		t.Fatal(err)
	}
	texts := append(slices.Clone(qs),
		"Café naïve résumé — Ünïcödé ÀÉÎÕÜ", "北京是中国的首都 and 東京", "a [SEP] b [CLS]c[MASK]",
		strings.Repeat("x", 120)+" tail", "tab\there\nnew  line\r\x00ctl\u200bzw", "emoji 😀 ok 🇫🇷",
		"Ωmega ǅ ﬁ ligature ½ ²", "U.S.A.'s \"quoted\" (paren) #hash $5,000.00 e-mail@x.org",
		"unaffable unbelievably antidisestablishmentarianism", "Ⅻ ① ｆｕｌｌｗｉｄｔｈ")
	var in bytes.Buffer
	for _, s := range texts {
		b, _ := json.Marshal(s)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(Python, filepath.Join(root, "bench", "peers", "e5_torch.py"), "embed", "--model", dir)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("e5_torch.py: %v\n%s", err, stderr.Bytes())
	}
	var got struct {
		IDs        [][]int32   `json:"ids"`
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.IDs) != len(texts) || len(got.Embeddings) != len(texts) {
		t.Fatalf("torch encoder returned %d ids and %d embeddings for %d texts", len(got.IDs), len(got.Embeddings), len(texts))
	}

	enc, err := embed.Open(embed.Config{Dir: dir, ORTLib: lib})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	cfg := enc.ModelConfig()
	ours, err := enc.EncodeQueries(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	d := enc.Dim()
	worst := 1.0
	for i, s := range texts {
		if want := enc.Tokenize(cfg.QueryPrefix, s); !slices.Equal(got.IDs[i], want) {
			t.Errorf("text %d %q: torch peer token ids\n%v\nours\n%v", i, s, got.IDs[i], want)
			continue
		}
		var dot, na, nb float64
		for j := 0; j < d; j++ {
			a, b := float64(ours[i*d+j]), got.Embeddings[i][j]
			dot, na, nb = dot+a*b, na+a*a, nb+b*b
		}
		cos := dot / math.Sqrt(na*nb)
		worst = min(worst, cos)
		if cos < 0.9999 {
			t.Errorf("text %d %q: cosine %.6f between the torch peer's embedding and ours (want >= 0.9999)", i, s, cos)
		}
	}
	t.Logf("%d texts: token ids equal, worst cosine %.7f", len(texts), worst)
}
