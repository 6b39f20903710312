package embed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// Paths of the native parts installed by scripts/setup.sh, relative to this
// package directory. A missing part skips the test through testutil.RequireNative
// (wordpiece_test.go), or fails it when RLSEARCH_REQUIRE_NATIVE=1.
const (
	encTestPython    = "/usr/bin/python3"
	encTestGenScript = "../scripts/gen_bert.py"
	encTestTokenizer = "../.cache/tokenizers/bert-uncased.json"
	encTestORTLib    = "../.cache/ort/libonnxruntime.so.1"
	encTestCorpus    = "../../shared/data/wiki_multihop/corpus.jsonl"
)

// encTestORTLibPath returns $ONNXRUNTIME_LIB or the setup.sh library, as an
// absolute path, skipping when neither exists.
func encTestORTLibPath(tb testing.TB) string {
	tb.Helper()
	lib := os.Getenv(EnvORTLib)
	if lib == "" {
		lib = encTestORTLib
	}
	abs, err := filepath.Abs(lib)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		testutil.RequireNative(tb, "ONNX Runtime library "+abs)
	}
	return abs
}

// encGenModel writes a gen_bert.py preset with seed 1 into a temporary
// directory and returns the directory.
func encGenModel(tb testing.TB, preset string) string {
	tb.Helper()
	if _, err := os.Stat(encTestTokenizer); err != nil {
		testutil.RequireNative(tb, "BERT tokenizer "+encTestTokenizer)
	}
	if err := exec.Command(encTestPython, "-c", "import onnx, numpy").Run(); err != nil {
		testutil.RequireNative(tb, "python3-onnx and python3-numpy for "+encTestPython)
	}
	dir := filepath.Join(tb.TempDir(), preset)
	cmd := exec.Command(encTestPython, encTestGenScript, "gen", "--preset", preset, "--seed", "1",
		"--tokenizer", encTestTokenizer, "--out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("gen_bert.py --preset %s: %v\n%s", preset, err, out)
	}
	return dir
}

func encOpen(tb testing.TB, cfg Config) *Encoder {
	tb.Helper()
	if cfg.ORTLib == "" {
		cfg.ORTLib = encTestORTLibPath(tb)
	}
	e, err := Open(cfg)
	if err != nil {
		tb.Fatalf("Open(%+v): %v", cfg, err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// encPassages returns up to n Contents from the shared corpus, read in place.
func encPassages(tb testing.TB, n int) []string {
	tb.Helper()
	f, err := os.Open(encTestCorpus)
	if err != nil {
		tb.Skipf("corpus %s: %v", encTestCorpus, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && len(out) < n {
		var d rlsearch.Document
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatalf("corpus line %d: %v", len(out)+1, err)
		}
		if strings.TrimSpace(d.Contents) != "" {
			out = append(out, d.Contents)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// encReference runs gen_bert.py reference on ids (unpadded rows).
func encReference(tb testing.TB, dir string, ids [][]int32) [][]float64 {
	tb.Helper()
	mask := make([][]int32, len(ids))
	for i, r := range ids {
		mask[i] = make([]int32, len(r))
		for j := range mask[i] {
			mask[i][j] = 1
		}
	}
	req, _ := json.Marshal(map[string]any{"input_ids": ids, "attention_mask": mask})
	cmd := exec.Command(encTestPython, encTestGenScript, "reference", "--model", dir)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("gen_bert.py reference: %v\n%s", err, stderr.Bytes())
	}
	var resp struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("reference output: %v", err)
	}
	return resp.Embeddings
}

// encParityTexts are hand-written texts of mixed lengths (so sub-batches pad),
// completed with real corpus passages, one of them long enough to truncate.
func encParityTexts(tb testing.TB) []string {
	texts := []string{
		"who wrote the novel dracula?",
		"a",
		"Robin Hood",
		"Where was the director of film The Fascist born?",
		"Ünïcödé façade — naïve café, 東京 and Москва!",
		"what is the capital of france",
	}
	ps := encPassages(tb, 13)
	texts = append(texts, ps...)
	texts = append(texts, strings.Repeat(ps[0]+" ", 4)) // > 256 tokens: truncated
	return texts
}

func encMaxAbsDiff(a []float32, b []float64) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-b[i]))
	}
	return m
}

func TestEncoderParity(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 2, BatchSize: 8})
	texts := encParityTexts(t)
	prefix := e.ModelConfig().PassagePrefix
	ids := make([][]int32, len(texts))
	lens := map[int]bool{}
	for i, s := range texts {
		ids[i] = e.Tokenize(prefix, s)
		lens[len(ids[i])] = true
	}
	if len(lens) < 5 {
		t.Fatalf("only %d distinct token lengths; the test needs padding", len(lens))
	}
	if got := len(ids[len(ids)-1]); got != e.MaxLength() {
		t.Fatalf("long text has %d tokens, want truncation to MaxLength %d", got, e.MaxLength())
	}
	want := encReference(t, dir, ids)
	dim := e.Dim()
	ctx := context.Background()
	fromIDs, err := e.EmbedIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	fromTexts, err := e.EncodePassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-4
	var worst float64
	for name, got := range map[string][]float32{"EmbedIDs": fromIDs, "EncodePassages": fromTexts} {
		if len(got) != len(texts)*dim {
			t.Fatalf("%s: len %d, want %d", name, len(got), len(texts)*dim)
		}
		for i := range texts {
			d := encMaxAbsDiff(got[i*dim:(i+1)*dim], want[i])
			worst = max(worst, d)
			if d > tol {
				t.Errorf("%s: text %d (%d tokens): max abs diff to numpy reference %.3g > %g", name, i, len(ids[i]), d, tol)
			}
		}
	}
	// The tolerance must be far below the differences between texts, or the
	// parity check would pass for any model that outputs a near-constant vector.
	minPair := math.Inf(1)
	for i := range texts {
		for j := range i {
			var m float64
			for d := range dim {
				m = max(m, math.Abs(want[i][d]-want[j][d]))
			}
			minPair = min(minPair, m)
		}
	}
	if minPair < 100*tol {
		t.Errorf("reference embeddings of two different texts differ by only %.3g (< 100×tol)", minPair)
	}
	t.Logf("max abs diff to numpy reference over %d texts: %.3g (closest pair of texts differs by %.3g)", len(texts), worst, minPair)
}

func TestEncoderEmptyTexts(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 1})
	dim := e.Dim()
	texts := []string{"", " ", "\t\n", "\u00a0\u3000", "real text", ""}
	for _, enc := range []struct {
		name string
		fn   func(context.Context, []string) ([]float32, error)
	}{{"queries", e.EncodeQueries}, {"passages", e.EncodePassages}} {
		t.Run(enc.name, func(t *testing.T) {
			got, err := enc.fn(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range texts {
				row := got[i*dim : (i+1)*dim]
				var ss float64
				for _, v := range row {
					if math.IsNaN(float64(v)) {
						t.Fatalf("text %q: NaN in embedding", s)
					}
					ss += float64(v) * float64(v)
				}
				wantZero := strings.TrimSpace(s) == ""
				if wantZero && ss != 0 {
					t.Errorf("text %q: norm² %g, want zero vector for whitespace-only text", s, ss)
				}
				if !wantZero && math.Abs(ss-1) > 1e-5 {
					t.Errorf("text %q: norm² %g, want unit length", s, ss)
				}
			}
		})
	}
	got, err := e.EncodeQueries(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("EncodeQueries(nil) = %d floats, %v; want 0, nil", len(got), err)
	}
}

func TestEncoderBatchInvariance(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 1, BatchSize: 32})
	ctx := context.Background()
	dim := e.Dim()
	long := encPassages(t, 6)
	for _, q := range []string{"who wrote dracula", "a", "Where was the director of film The Fascist born?"} {
		alone, err := e.EncodeQueries(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		// q sits between long texts in one sub-batch, padded to the longest.
		batch := append(append(append([]string{}, long[:3]...), q), long[3:]...)
		in, err := e.EncodeQueries(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		row := in[3*dim : 4*dim]
		var m float64
		for i := range row {
			m = max(m, math.Abs(float64(row[i]-alone[i])))
		}
		if m > 1e-5 {
			t.Errorf("%q: alone vs padded in a batch of long texts differ by %.3g > 1e-5", q, m)
		}
	}
}

func TestEncoderConcurrent(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 3, BatchSize: 4})
	ctx := context.Background()
	texts := encPassages(t, 48)
	const goroutines = 64
	batchOf := func(g int) []string {
		// Each goroutine has its own mix: different sizes and offsets.
		lo := g % len(texts)
		n := 1 + g%9
		var b []string
		for i := range n {
			b = append(b, texts[(lo+i*5)%len(texts)])
		}
		return b
	}
	serial := make([][]float32, goroutines)
	for g := range goroutines {
		v, err := e.EncodePassages(ctx, batchOf(g))
		if err != nil {
			t.Fatal(err)
		}
		serial[g] = v
	}
	got := make([][]float32, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() { got[g], errs[g] = e.EncodePassages(ctx, batchOf(g)) })
	}
	wg.Wait()
	for g := range goroutines {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		for i := range serial[g] {
			if got[g][i] != serial[g][i] {
				t.Fatalf("goroutine %d: element %d = %g concurrently, %g serially", g, i, got[g][i], serial[g][i])
			}
		}
	}
}

func TestEncoderCancelAndClose(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 1, BatchSize: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.EncodeQueries(ctx, []string{"a", "b"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err %v, want context.Canceled", err)
	}
	if _, err := e.EmbedIDs(context.Background(), [][]int32{{101, 1 << 30, 102}}); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("out-of-vocabulary id: err %v, want rlsearch.ErrBadInput", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EncodeQueries(context.Background(), []string{"a"}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err %v, want ErrClosed", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestEncoderBadModelDir(t *testing.T) {
	lib := encTestORTLibPath(t)
	good := encGenModel(t, "tiny")
	// variant copies the good model directory and applies edit to it.
	variant := func(edit func(dir string)) string {
		dir := t.TempDir()
		for _, f := range []string{ModelFile, TokenizerFile, ConfigFile} {
			data, err := os.ReadFile(filepath.Join(good, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		edit(dir)
		return dir
	}
	setConfig := func(field string, value any) func(string) {
		return func(dir string) {
			path := filepath.Join(dir, ConfigFile)
			var m map[string]any
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			m[field] = value
			data, _ = json.Marshal(m)
			os.WriteFile(path, data, 0o644)
		}
	}
	write := func(name, content string) func(string) {
		return func(dir string) { os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
	}
	remove := func(name string) func(string) {
		return func(dir string) { os.Remove(filepath.Join(dir, name)) }
	}
	tests := []struct {
		name    string
		dir     string
		wantIs  error
		wantMsg string
	}{
		{"missing dir", filepath.Join(t.TempDir(), "nope"), os.ErrNotExist, ConfigFile},
		{"no rlsearch.json", variant(remove(ConfigFile)), os.ErrNotExist, ConfigFile},
		{"rlsearch.json not json", variant(write(ConfigFile, "{")), ErrModelConfig, ConfigFile},
		{"dim zero", variant(setConfig("dim", 0)), ErrModelConfig, "dim"},
		{"dim mismatch", variant(setConfig("dim", 64)), ErrDimMismatch, "64"},
		{"unknown input", variant(setConfig("inputs", []string{"input_ids", "pixel_values"})), ErrModelConfig, "pixel_values"},
		{"bad pooling", variant(setConfig("pooling", "max")), ErrModelConfig, "pooling"},
		{"wrong output name", variant(setConfig("output", "pooler_output")), nil, "pooler_output"},
		{"max_length beyond positions", variant(setConfig("max_length", 600)), nil, "600-token"},
		{"missing model input", variant(setConfig("inputs", []string{"input_ids", "attention_mask"})), nil, "probe"},
		{"no model.onnx", variant(remove(ModelFile)), os.ErrNotExist, ModelFile},
		{"garbage model.onnx", variant(write(ModelFile, "not an onnx model")), nil, ModelFile},
		{"no tokenizer", variant(remove(TokenizerFile)), nil, TokenizerFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Open(Config{Dir: tc.dir, ORTLib: lib})
			if err == nil {
				e.Close()
				t.Fatalf("Open(%s) succeeded, want an error", tc.dir)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err %v, want errors.Is %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) || !strings.HasPrefix(err.Error(), "embed: ") {
				t.Errorf("err %q, want an embed: error mentioning %q", err, tc.wantMsg)
			}
		})
	}
}

// TestEncoderBadORTLib checks the error for a missing ONNX Runtime library in
// a child process, because the library is loaded once per process.
func TestEncoderBadORTLib(t *testing.T) {
	if dir := os.Getenv("EMBED_TEST_BAD_ORT_DIR"); dir != "" {
		_, err := Open(Config{Dir: dir, ORTLib: "/nonexistent/libonnxruntime.so.1"})
		fmt.Printf("OPEN-ERROR: %v\n", err)
		return
	}
	dir := encGenModel(t, "tiny")
	cmd := exec.Command(os.Args[0], "-test.run=^TestEncoderBadORTLib$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EMBED_TEST_BAD_ORT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	msg := string(out)
	for _, want := range []string{"OPEN-ERROR: embed: load ONNX Runtime", "/nonexistent/libonnxruntime.so.1", "ONNXRUNTIME_LIB"} {
		if !strings.Contains(msg, want) {
			t.Errorf("child output lacks %q:\n%s", want, msg)
		}
	}
}

func TestEncoderConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string // "" = valid
	}{
		{"defaults", Config{Dir: "m"}, ""},
		{"all set", Config{Dir: "m", Sessions: 2, IntraOpThreads: 1, MaxLength: 512, BatchSize: 64}, ""},
		{"no dir", Config{}, "Dir"},
		{"negative sessions", Config{Dir: "m", Sessions: -1}, "Sessions"},
		{"negative threads", Config{Dir: "m", IntraOpThreads: -2}, "IntraOpThreads"},
		{"max length 1", Config{Dir: "m", MaxLength: 1}, "MaxLength"},
		{"max length huge", Config{Dir: "m", MaxLength: MaxMaxLength + 1}, "MaxLength"},
		{"negative batch", Config{Dir: "m", BatchSize: -1}, "BatchSize"},
		{"huge batch", Config{Dir: "m", BatchSize: MaxBatchSize + 1}, "BatchSize"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "Config."+tc.field) {
				t.Fatalf("Validate() = %v, want an error naming Config.%s", err, tc.field)
			}
		})
	}
}

// BenchmarkEncode measures EncodePassages throughput on real corpus passages
// (Contents, E5 "passage: " prefix, MaxLength 256) in calls of 256 passages
// cut into sub-batches of 32.
func BenchmarkEncode(b *testing.B) {
	passages := encPassages(b, 256)
	for _, preset := range []string{"tiny", "minilm"} {
		b.Run("preset="+preset+"/batch=32", func(b *testing.B) {
			dir := encGenModel(b, preset)
			e := encOpen(b, Config{Dir: dir, BatchSize: 32})
			ctx := context.Background()
			if _, err := e.EncodePassages(ctx, passages[:32]); err != nil { // warm up
				b.Fatal(err)
			}
			tokens := 0
			for _, p := range passages {
				tokens += len(e.Tokenize(e.ModelConfig().PassagePrefix, p))
			}
			n := 0
			start := time.Now()
			for b.Loop() {
				if _, err := e.EncodePassages(ctx, passages); err != nil {
					b.Fatal(err)
				}
				n += len(passages)
			}
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(n)/secs, "passages/s")
			b.ReportMetric(float64(n/len(passages)*tokens)/secs, "tokens/s")
		})
	}
}
