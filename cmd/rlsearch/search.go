package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
)

// ranked is one printed result.
type ranked struct {
	doc   rlsearch.Document
	score float64
}

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	var (
		idx       indexFlags
		server    string
		retriever string
		k         int
		questions string
		limit     int
	)
	idx.bind(fs)
	fs.StringVar(&server, "server", "", "ask a running server (e.g. http://127.0.0.1:8000) instead of opening --index")
	fs.StringVar(&retriever, "retriever", "", `"bm25" or "e5" (default: e5 when --model is set, else bm25; with --server the server's default)`)
	fs.IntVar(&k, "k", 10, "results per question")
	fs.StringVar(&questions, "questions", "", "also take questions from this JSONL question set (gold passages are marked *)")
	fs.IntVar(&limit, "limit", 5, "how many questions to take from --questions")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rlsearch search (--index DIR | --server URL) [flags] \"question\" ...\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if k <= 0 {
		return usageErr("-k must be positive, got %d", k)
	}
	if server != "" && idx.dir != "" {
		return usageErr("give either --index (search locally) or --server (ask a running server), not both")
	}
	type question struct {
		text string
		gold []string
	}
	var qs []question
	for _, a := range fs.Args() {
		qs = append(qs, question{text: a})
	}
	if questions != "" {
		set, err := bench.LoadQuestions(questions)
		if err != nil {
			return err
		}
		for _, q := range set[:min(limit, len(set))] {
			qs = append(qs, question{text: q.Question, gold: q.GoldIDs})
		}
	}
	if len(qs) == 0 {
		return usageErr("no question given (pass questions as arguments or --questions FILE)")
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.text
	}
	var results [][]ranked
	var err error
	if server != "" {
		results, err = searchServer(ctx, server, retriever, texts, k)
	} else {
		results, err = searchIndex(ctx, &idx, retriever, texts, k)
	}
	if err != nil {
		return err
	}
	for i, q := range qs {
		fmt.Fprintf(stdout, "Q: %s\n", q.text)
		if len(results[i]) == 0 {
			fmt.Fprintf(stdout, "   (no results)\n")
		}
		for j, r := range results[i] {
			mark := " "
			if slices.Contains(q.gold, r.doc.ID) {
				mark = "*"
			}
			fmt.Fprintf(stdout, " %s%2d. %8.4f  %s  [%s]\n", mark, j+1, r.score, r.doc.Title(), r.doc.ID)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func searchIndex(ctx context.Context, idx *indexFlags, retriever string, texts []string, k int) ([][]ranked, error) {
	ix, closeIx, err := idx.open(ctx)
	if err != nil {
		return nil, err
	}
	defer closeIx()
	rs := ix.Retrievers()
	if retriever == "" {
		retriever = "bm25"
		if _, ok := rs["e5"]; ok {
			retriever = "e5"
		}
	}
	r, ok := rs[retriever]
	if !ok {
		return nil, usageErr("retriever %q is not available (have %v; e5 needs --model)", retriever, names(rs))
	}
	hits, err := r.Retrieve(ctx, texts, k)
	if err != nil {
		return nil, err
	}
	out := make([][]ranked, len(hits))
	for i, hs := range hits {
		for _, h := range hs {
			d, err := ix.Doc(h.Row)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], ranked{doc: d, score: float64(h.Score)})
		}
	}
	return out, nil
}

// searchServer sends one Search-R1 /retrieve request.
func searchServer(ctx context.Context, base, retriever string, texts []string, k int) ([][]ranked, error) {
	req := map[string]any{"queries": texts, "topk": k, "return_scores": true}
	if retriever != "" {
		req["retriever"] = retriever
	}
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/retrieve", bytes.NewReader(body))
	if err != nil {
		return nil, usageErr("--server %q: %v", base, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", hr.URL, resp.Status, bytes.TrimSpace(raw))
	}
	var out struct {
		Result [][]struct {
			Document rlsearch.Document `json:"document"`
			Score    float64           `json:"score"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: bad response: %v", hr.URL, err)
	}
	if len(out.Result) != len(texts) {
		return nil, fmt.Errorf("%s: %d result lists for %d queries", hr.URL, len(out.Result), len(texts))
	}
	res := make([][]ranked, len(out.Result))
	for i, l := range out.Result {
		for _, r := range l {
			res[i] = append(res[i], ranked{doc: r.Document, score: r.Score})
		}
	}
	return res, nil
}
