package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
)

// e2eQueries is how many distinct query texts the end-to-end benchmark
// cycles through (a request never repeats one: the server searches a
// repeated query of a request once).
const e2eQueries = 4096

// questionWords are the words of the generated queries: common English
// words, each one WordPiece token of bert-base-uncased (the E5-base
// vocabulary), so that a query is as many tokens as words.
var questionWords = strings.Fields(`who what when where which how many year film album song band city river country
	state team player game season league born died first last name wife husband father mother son daughter
	director actor singer writer author book novel series show network station company founded built located
	capital largest population university college school church war battle army navy president king queen prince
	minister party election government court law island mountain lake sea ocean north south east west new old
	american british french german english national international world history music art science water light
	record award prize won lost played released published directed written produced based named called known
	member group family house road bridge tower park street town village county district region area home`)

// e2eTexts are n distinct generated questions of exactly tokens tokens
// each as the encoder feeds them (prefix, [CLS] and [SEP] included), from
// splitmix64 (seeded): E5's "512 queries × 32 tokens" workload.
func e2eTexts(enc *embed.Encoder, n, tokens int, seed uint64) ([]string, error) {
	prefix := enc.ModelConfig().QueryPrefix
	x := seed
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for draws := 0; len(out) < n; draws++ {
		if draws > 100*n {
			return nil, fmt.Errorf("e2e: %d distinct queries of %d tokens are more than %d words make (%d found)", n, tokens, len(questionWords), len(out))
		}
		var words []string
		for tries := 0; tries < 8*tokens; tries++ {
			w := questionWords[splitmix64(&x)%uint64(len(questionWords))]
			got := len(enc.Tokenize(prefix, strings.Join(append(words, w), " ")))
			if got > tokens {
				continue // a word of several tokens would overshoot: another
			}
			words = append(words, w)
			if got == tokens || got >= enc.MaxLength() {
				break
			}
		}
		t := strings.Join(words, " ")
		if got := len(enc.Tokenize(prefix, t)); got != tokens {
			return nil, fmt.Errorf("e2e: a generated query is %d tokens, want %d (max length %d)", got, tokens, enc.MaxLength())
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// endToEnd is the "e2e" op: /retrieve with E5 over the loaded index, text
// in and passages out, encoder and top-k on the GPU (issue 22's
// "/retrieve with E5 on the GPU at 21M × 768 ≥ 5,000 queries/s at batch
// 512 end to end"). It opens the encoder of c.Model (embed.Open, provider
// c.Provider: "gpu" by default, "cpu" with -cpu) and measures
//   - direct: the e5 retriever (index.NewDenseRetriever: EncodeQueries then
//     Search) on batches of c.Batch queries, median of c.Reps after two
//     warm-ups, and the encode and search parts alone;
//   - http_batch: POST /retrieve of c.Batch queries per request at
//     concurrency c.Concurrency (closed loop, c.Seconds): queries/s and
//     per-request p50/p99;
//   - http_single: one query per request at concurrency
//     c.SingleConcurrency through the server's batching queue
//     (server.NewBatcher, at most c.Batch queries per encoder call,
//     2 ms wait, serve's default): requests/s, p50/p99.
func (b *bench) endToEnd(c cmd) (map[string]any, error) {
	if b.idx == nil {
		return nil, errors.New("e2e: no index loaded")
	}
	if c.Model == "" {
		return nil, errors.New(`e2e: "model" (an E5 model directory) is required`)
	}
	provider := c.Provider
	if provider == "" {
		provider = "gpu"
		if b.cpu {
			provider = "cpu"
		}
	}
	batch, topk, reps := or(c.Batch, 512), or(c.TopK, 3), or(c.Reps, 7)
	conc, single, secs := or(c.Concurrency, 4), or(c.SingleConcurrency, 32), or(c.Seconds, 8.0)
	if batch > e2eQueries {
		return nil, fmt.Errorf("e2e: batch %d > %d distinct queries", batch, e2eQueries)
	}
	t0 := time.Now()
	enc, err := embed.Open(embed.Config{Dir: c.Model, Provider: provider, Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	if err != nil {
		return nil, fmt.Errorf("e2e: %w", err)
	}
	defer enc.Close()
	if enc.Dim() != b.idx.Dim() {
		return nil, fmt.Errorf("e2e: the model's dim %d differs from the index's %d", enc.Dim(), b.idx.Dim())
	}
	if g, ok := b.idx.(*ann.GPUFlat); ok {
		if err := g.SetPath(ann.GPUPathAuto); err != nil {
			return nil, err
		}
	}
	texts, err := e2eTexts(enc, e2eQueries, or(c.Tokens, 32), 11)
	if err != nil {
		return nil, err
	}
	device, why := enc.Placement()
	res := map[string]any{"model": c.Model, "provider": provider, "encoder_device": device, "encoder_placement": why,
		"n": b.idx.Len(), "dim": b.idx.Dim(), "batch": batch, "topk": topk, "tokens_per_query": or(c.Tokens, 32),
		"open_s": time.Since(t0).Seconds()}
	retr := index.NewDenseRetriever(enc, b.idx)
	ctx := context.Background()

	// Direct: the retriever, and its two parts.
	batchAt := func(i int) []string {
		lo := (i * batch) % (e2eQueries - batch + 1)
		return texts[lo : lo+batch]
	}
	var enc1, search1, both []float64
	for i := -2; i < reps; i++ {
		q := batchAt(i + 2)
		s := time.Now()
		vecs, err := enc.EncodeQueries(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("e2e: encode: %w", err)
		}
		e := time.Since(s)
		s = time.Now()
		if _, err := b.idx.Search(ctx, vecs, topk); err != nil {
			return nil, fmt.Errorf("e2e: search: %w", err)
		}
		se := time.Since(s)
		s = time.Now()
		hits, err := retr.Retrieve(ctx, batchAt(i+3), topk)
		if err != nil {
			return nil, fmt.Errorf("e2e: retrieve: %w", err)
		}
		r := time.Since(s)
		if want := min(topk, b.idx.Len()); len(hits) != batch || len(hits[0]) != want {
			first := -1
			if len(hits) > 0 {
				first = len(hits[0])
			}
			return nil, fmt.Errorf("e2e: retrieve answered %d lists (the first of %d hits), want %d of %d", len(hits), first, batch, want)
		}
		if i >= 0 {
			enc1, search1, both = append(enc1, ms(e)), append(search1, ms(se)), append(both, ms(r))
		}
	}
	res["direct"] = map[string]any{"reps": reps, "encode_ms": median(enc1), "search_ms": median(search1),
		"retrieve_ms": median(both), "qps": float64(batch) / (median(both) / 1e3), "retrieve_ms_all": both}

	// HTTP, through package server and its batching queue.
	bt := server.NewBatcher(retr, batch, 2*time.Millisecond)
	defer bt.(io.Closer).Close()
	url, stop, err := serveLoopback(bt, b.idx.Len())
	if err != nil {
		return nil, err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(conc, single), MaxConnsPerHost: max(conc, single)}}
	request := func(q []string) []byte {
		body, _ := json.Marshal(map[string]any{"queries": q, "topk": topk, "return_scores": true})
		return body
	}
	bodies := make([][]byte, 16)
	for i := range bodies {
		bodies[i] = request(batchAt(i))
	}
	hb, err := warmClosedLoop(client, url, func(i int) []byte { return bodies[i%len(bodies)] }, conc, secs)
	if err != nil {
		return nil, fmt.Errorf("e2e: /retrieve of %d queries per request: %w", batch, err)
	}
	hb["concurrency"], hb["queries_per_request"], hb["qps"] = conc, batch, hb["rps"].(float64)*float64(batch)
	res["http_batch"] = hb
	singles := make([][]byte, e2eQueries)
	for i := range singles {
		singles[i] = request(texts[i : i+1])
	}
	hs1, err := warmClosedLoop(client, url, func(i int) []byte { return singles[i%len(singles)] }, single, secs)
	if err != nil {
		return nil, fmt.Errorf("e2e: /retrieve of one query per request: %w", err)
	}
	hs1["concurrency"], hs1["queries_per_request"], hs1["batcher_max"] = single, 1, batch
	res["http_single"] = hs1
	return res, nil
}
