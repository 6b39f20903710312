package suites

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/rerank"
)

// Encode measures the E5-style encoder (package embed, ONNX Runtime on the
// CPU) with the generated tiny BERT test model (or "encode.model=DIR", an
// E5 export): passages/s of wiki_multihop passages at max length
// "encode.len" (default 64,128,256; quick 128) and queries/s of the real
// questions at max length 64, each with "encode.batch" texts per call
// (default 1,32; the encoder's ORT batch is the same). Skipped without
// ONNX Runtime or a model.
func Encode() bench.Suite {
	return bench.Suite{Name: "encode", Doc: "text encoder (embed, ONNX Runtime): passages/s and queries/s by max length and batch", Setup: setupEncode}
}

// Rerank measures the Qwen3-Reranker path (package rerank) with the
// generated tiny Qwen3 test model (or "rerank.model=DIR"): pairs/s of a
// question against "rerank.docs" wiki passages per call (default 10,50;
// quick 10). Skipped without ONNX Runtime, the Qwen3 tokenizer or a model.
func Rerank() bench.Suite {
	return bench.Suite{Name: "rerank", Doc: "Qwen3-style reranker (rerank, ONNX Runtime): pairs/s by documents per call", Setup: setupRerank}
}

// modelWorkload is what the encode and rerank suites share: the ONNX
// Runtime library, the model directory ("<suite>.model", else the
// generated test model of script), and the first nDocs wiki_multihop
// passages and the real questions.
type modelWorkload struct {
	lib, model string
	docs       []rlsearch.Document
	qs         []bench.Question
}

func loadModelWorkload(env *bench.Env, suite, tokFile, name, script string, args []string, nDocs int) (*modelWorkload, error) {
	lib, err := ortLib(env, suite)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer(env, tokFile)
	if err != nil && env.Get(suite, "model", "") == "" {
		return nil, err
	}
	model, err := testModel(env, suite, name, script, append(args, "--tokenizer", tok)...)
	if err != nil {
		return nil, err
	}
	corpus, err := dataFile(env, wikiCorpus)
	if err != nil {
		return nil, err
	}
	qpath, err := dataFile(env, wikiQuestions)
	if err != nil {
		return nil, err
	}
	docs, err := loadPassages(corpus, nDocs)
	if err != nil {
		return nil, err
	}
	qs, err := bench.LoadQuestions(qpath)
	if err != nil {
		return nil, err
	}
	return &modelWorkload{lib: lib, model: model, docs: docs, qs: qs}, nil
}

func setupEncode(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	w, err := loadModelWorkload(env, "encode", "bert-uncased.json", "tiny", "gen_bert.py", []string{"--preset", "tiny"}, 2048)
	if err != nil {
		return nil, nil, err
	}
	lib, model := w.lib, w.model
	passages := make([]string, len(w.docs))
	for i, d := range w.docs {
		passages[i] = d.Contents
	}
	questions := bench.Texts(w.qs)
	lens, err := ints("encode.len", env.Get("encode", "len", pick(env, "128", "64,128,256")))
	if err != nil {
		return nil, nil, err
	}
	batches, err := ints("encode.batch", env.Get("encode", "batch", "1,32"))
	if err != nil {
		return nil, nil, err
	}
	var encs []*embed.Encoder
	cleanup := func() {
		for _, e := range encs {
			e.Close()
		}
	}
	open := func(maxLen, batch int) (*embed.Encoder, error) {
		e, err := embed.Open(embed.Config{Dir: model, ORTLib: lib, MaxLength: maxLen, BatchSize: batch})
		if err != nil {
			return nil, err
		}
		encs = append(encs, e)
		return e, nil
	}
	var cases []bench.Case
	add := func(kind string, texts []string, maxLen, b int) error {
		e, err := open(maxLen, b)
		if err != nil {
			return err
		}
		p := map[string]any{"model": e.Name(), "kind": kind, "max_len": maxLen, "batch": b}
		unit := "passages/s"
		fn := e.EncodePassages
		if kind == "queries" {
			unit, fn = "queries/s", e.EncodeQueries
		}
		note := fmt.Sprintf("model %s (%s), ORT %s provider; wiki_multihop passages / questions", e.Name(), model, e.Provider())
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: unit, Note: note,
			Run: func(ctx context.Context) (bench.Rep, error) {
				return bench.Measure(ctx, env.Budget(2), func(ctx context.Context, i int) (int, error) {
					_, err := fn(ctx, cycle(texts, i*b, b))
					return b, err
				})
			}})
		return nil
	}
	for _, l := range lens {
		for _, b := range batches {
			if err := add("passages", passages, l, b); err != nil {
				cleanup()
				return nil, nil, err
			}
		}
	}
	for _, b := range batches {
		if err := add("queries", questions, 64, b); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	return cases, cleanup, nil
}

func setupRerank(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	w, err := loadModelWorkload(env, "rerank", "qwen3.json", "qwen3-tiny", "gen_qwen3.py", []string{"--variant", "last"}, 1024)
	if err != nil {
		return nil, nil, err
	}
	lib, model, docs, qs := w.lib, w.model, w.docs, w.qs
	counts, err := ints("rerank.docs", env.Get("rerank", "docs", pick(env, "10", "10,50")))
	if err != nil {
		return nil, nil, err
	}
	r, err := rerank.Open(rerank.Config{Dir: model, ORTLib: lib, MaxLength: 512})
	if err != nil {
		return nil, nil, err
	}
	var cases []bench.Case
	for _, n := range counts {
		p := map[string]any{"model": r.Name(), "docs": n, "max_len": 512}
		note := fmt.Sprintf("model %s (%s, %s); real questions against wiki_multihop passages, max 512 tokens per pair", r.Name(), model, r.Kind())
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "pairs/s", Note: note,
			Run: func(ctx context.Context) (bench.Rep, error) {
				return bench.Measure(ctx, env.Budget(2), func(ctx context.Context, i int) (int, error) {
					ds := make([]rlsearch.Document, n)
					for j := range ds {
						ds[j] = docs[(i*n+j)%len(docs)]
					}
					_, err := r.Rerank(ctx, qs[i%len(qs)].Question, ds)
					return n, err
				})
			}})
	}
	return cases, func() { r.Close() }, nil
}
