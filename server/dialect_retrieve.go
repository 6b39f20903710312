package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// Defaults of the dialects, each from the upstream server its client was
// written against.
const (
	// DefaultBrowseCompK is BrowseComp-Plus's fixed k
	// (searcher/search_r1_server.py --k, default 5).
	DefaultBrowseCompK = 5
	// rllmDefaultTopK is rLLM's RetrieveRequest.top_k default
	// (examples/fully_async/deepresearch/rag/rag_server.py).
	rllmDefaultTopK = 10
	// r1DefaultK is R1-Searcher's data.get("k", 3) (train/wiki_corpus_load.py).
	r1DefaultK = 3
	// recallDefaultTopN is ReCall's QueryRequest.top_n default
	// (scripts/serving/retriever_serving.py).
	recallDefaultTopN = 10
	// stepDefaultTopK and stepDefaultCandidates are StepSearch's
	// SearchRequest defaults, topk 5 and topk_retrieval 10
	// (search_r1/search/retrieval_rerank_server.py).
	stepDefaultTopK       = 5
	stepDefaultCandidates = 10
	// rerankParallel bounds the queries of one /retrieve/rerank request
	// reranked at once; the reranker batches concurrent calls itself.
	rerankParallel = 16
)

// dispatchRetrieve reads a /retrieve body and tells its dialect by its
// fields and encoding (never by guessing: a request mixing two dialects'
// fields is a 400 naming the field), and the listener's profile:
//
//	profile     encoding  fields                    dialect     reply
//	browsecomp  any       query                     BrowseComp  {"result": [{"document": {"title","text"}, "docid"}]}
//	other       any       queries                   Search-R1   {"result": [[...]]} (asearcher: documents with "url")
//	other       any       query + top_k or k        rLLM        {"query", "results": [{"id","content","score","document"}], "num_results"}
//	other       JSON      query                     SkyRL       Search-R1's reply for one query
//	other       msgpack   query                     GEM         {"result": [{"document", "score"}]} (flat)
//
// It returns the request for the streamed Search-R1 reply (SkyRL's is
// that too), or nil when it answered the request itself.
func (s *Server) dispatchRetrieve(w *respWriter, r *http.Request) (*retrieveRequest, bodyEncoding, error) {
	body, enc, err := s.readDialectBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, enc, err
	}
	fields, err := jsonbody.Object(body)
	if err != nil {
		return nil, enc, err
	}
	profile := profileOf(r.Context())
	_, hasQueries := fields["queries"]
	_, hasQuery := fields["query"]
	switch {
	case profile == ProfileBrowseComp:
		w.dialect = dBrowseComp.name
		return nil, enc, s.serveBrowseComp(w, r, enc, fields)
	case hasQueries || !hasQuery:
		w.dialect = dSearchR1.name
		if profile == ProfileASearcher {
			w.dialect = dASearcher.name
		}
		req, err := s.parseRetrieve(fields)
		if err != nil {
			return nil, enc, err
		}
		req.urls = profile == ProfileASearcher
		return req, enc, nil
	case present(fields, "top_k") || present(fields, "k"):
		w.dialect = dRLLM.name
		if present(fields, "topk") {
			other := "top_k"
			if !present(fields, "top_k") {
				other = "k"
			}
			return nil, enc, rlsearch.BadField(other, `both "topk" (SkyRL, GEM) and %q (rLLM) given: two dialects' names for the number of results; send one`, other)
		}
		return nil, enc, s.serveRLLM(w, r, enc, fields)
	case enc == encMsgpack:
		w.dialect = dGEM.name
		return nil, enc, s.serveGEM(w, r, fields)
	default:
		w.dialect = dSkyRL.name
		req, err := s.parseSingle(dSkyRL, fields)
		if err != nil {
			return nil, enc, err
		}
		req.urls = profile == ProfileASearcher
		return req, enc, nil
	}
}

// parseSingle decodes SkyRL's and GEM's {"query", "topk",
// "return_scores", "retriever"} into a one-query request.
func (s *Server) parseSingle(d *dialect, fields map[string]json.RawMessage) (*retrieveRequest, error) {
	if err := d.checkKeys(fields); err != nil {
		return nil, err
	}
	q, err := singleQuery(fields, "query")
	if err != nil {
		return nil, err
	}
	req := &retrieveRequest{queries: []string{q}}
	if req.topK, err = fieldCount(fields, "topk", defaultTopK, s.cfg.MaxTopK); err != nil {
		return nil, err
	}
	if req.returnScores, err = fieldBool(fields, "return_scores", false); err != nil {
		return nil, err
	}
	if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
		return nil, err
	}
	return req, nil
}

// singleQuery decodes a one-string query field; a list there gets the
// message of /retrieve's missing "queries", which is where a batch goes.
func singleQuery(fields map[string]json.RawMessage, key string) (string, error) {
	if raw := fields[key]; jsonbody.Kind(raw) == "list" {
		return "", rlsearch.BadField("queries", `missing required field "queries" (a list of strings): %q holds a list; send a batch as "queries": [...] (Search-R1) or one string as %q (SkyRL, rLLM, GEM, ReCall's /search)`, key, key)
	}
	return fieldString(fields, key)
}

// retrieved holds a dialect request's hits with their documents: query
// i's are hits[ends[i-1]:ends[i]], docs aligned with hits.
type retrieved struct {
	hits []rlsearch.Hit
	docs []rlsearch.Document
	ends []int
}

// list returns query i's hits and documents.
func (x *retrieved) list(i int) ([]rlsearch.Hit, []rlsearch.Document) {
	lo := 0
	if i > 0 {
		lo = x.ends[i-1]
	}
	return x.hits[lo:x.ends[i]], x.docs[lo:x.ends[i]]
}

// retrieveDocs is the one retrieval call of every dialect: search (the
// cleaning, chunking and checks of /retrieve) and every hit's document.
func (s *Server) retrieveDocs(ctx context.Context, req *retrieveRequest) (*retrieved, error) {
	s.metrics.batchSize.Observe(float64(len(req.queries)))
	hits, docs, ends, err := s.search(ctx, req)
	if err != nil {
		return nil, err
	}
	if docs == nil {
		docs = make([]rlsearch.Document, len(hits))
		for i, h := range hits {
			if docs[i], err = DocOf(ctx, s.cfg.Docs, h.Row); err != nil {
				return nil, fmt.Errorf("document of row %d: %w", h.Row, err)
			}
		}
	}
	return &retrieved{hits: hits, docs: docs, ends: ends}, nil
}

// answer runs req's retrieval and writes build's reply in enc, with the
// error mapping of /retrieve (retrieveFailed) and its partial flag.
func (s *Server) answer(w *respWriter, r *http.Request, enc bodyEncoding, req *retrieveRequest, build func(*retrieved) any) error {
	w.queries = len(req.queries)
	ctx, nt := withNotes(r.Context())
	res, err := s.retrieveDocs(ctx, req)
	if _, unavailable := nt.result(); err == nil && unavailable != nil {
		err = unavailable
	}
	if err != nil {
		s.retrieveFailed(w, r, req.name, err)
		return nil
	}
	nt.flag(w)
	s.writeDialect(w, r, enc, build(res))
	return nil
}

// Reply shapes. Scores are float32 widened to float64 (what encoding/json
// and appendScore write on /retrieve).
type (
	docValue struct {
		ID       string `json:"id"`
		Contents string `json:"contents"`
		URL      string `json:"url,omitempty"`
	}
	scoredDoc struct {
		Document docValue `json:"document"`
		Score    float64  `json:"score"`
	}
	// gemHit is one hit of GEM's flat reply; Score is null without
	// return_scores (gem/tools/search_engine/retrieval_server.py).
	gemHit struct {
		Document docValue `json:"document"`
		Score    *float64 `json:"score"`
	}
	rllmHit struct {
		ID       string   `json:"id"`
		Content  string   `json:"content"`
		Score    float64  `json:"score"`
		Document docValue `json:"document"`
	}
	rllmReply struct {
		Query      string    `json:"query"`
		Results    []rllmHit `json:"results"`
		NumResults int       `json:"num_results"`
	}
	bcDoc struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	bcHit struct {
		Document bcDoc  `json:"document"`
		DocID    string `json:"docid"`
	}
	resultReply struct {
		Result  any      `json:"result"`
		Partial []string `json:"partial,omitempty"`
	}
	r1Reply struct {
		Queries []string   `json:"queries"`
		Answers [][]string `json:"answers"`
	}
)

func (s *Server) docValue(req *retrieveRequest, h rlsearch.Hit, d rlsearch.Document, fromRetriever bool) docValue {
	v := docValue{ID: d.ID, Contents: d.Contents}
	if req.urls {
		v.URL = s.urlOf(h.Row, d, fromRetriever)
	}
	return v
}

// writeResultValue writes Search-R1's reply as a value (MessagePack
// bodies); writeResult streams the JSON one.
func (s *Server) writeResultValue(w *respWriter, r *http.Request, req *retrieveRequest, enc bodyEncoding, hits []rlsearch.Hit, docs []rlsearch.Document, ends []int, partial []string) {
	fromRetriever := docs != nil
	out := make([][]any, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = make([]any, 0, end-start)
		for j := start; j < end; j++ {
			var d rlsearch.Document
			if fromRetriever {
				d = docs[j]
			} else {
				var err error
				if d, err = DocOf(r.Context(), s.cfg.Docs, hits[j].Row); err != nil {
					s.retrieveFailed(w, r, req.name, fmt.Errorf("document of row %d: %w", hits[j].Row, err))
					return
				}
			}
			v := s.docValue(req, hits[j], d, fromRetriever)
			if req.returnScores {
				out[i] = append(out[i], scoredDoc{Document: v, Score: float64(hits[j].Score)})
			} else {
				out[i] = append(out[i], v)
			}
		}
		start = end
	}
	s.writeDialect(w, r, enc, resultReply{Result: out, Partial: partial})
}

// serveRLLM answers rLLM's {"query", "top_k" | "k"}: each result carries
// "id"/"content" (deepresearch/tool.py _extract_content reads a
// `"Title"\ntext` string) and "document" {"id", "contents"}
// (examples/search/local_retrieval_tool.py), so both rLLM clients parse it.
func (s *Server) serveRLLM(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
	if err := dRLLM.checkKeys(fields); err != nil {
		return err
	}
	if present(fields, "top_k") && present(fields, "k") {
		return rlsearch.BadField("k", `both "top_k" and "k" given (rLLM's server lets k win); send one`)
	}
	q, err := singleQuery(fields, "query")
	if err != nil {
		return err
	}
	key := "top_k"
	if present(fields, "k") {
		key = "k"
	}
	req := &retrieveRequest{queries: []string{q}}
	if req.topK, err = fieldCount(fields, key, rllmDefaultTopK, s.cfg.MaxTopK); err != nil {
		return err
	}
	if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
		return err
	}
	return s.answer(w, r, enc, req, func(res *retrieved) any {
		hits, docs := res.list(0)
		out := rllmReply{Query: q, Results: make([]rllmHit, len(hits)), NumResults: len(hits)}
		for i, h := range hits {
			out.Results[i] = rllmHit{ID: docs[i].ID, Content: docs[i].Contents, Score: float64(h.Score), Document: docValue{ID: docs[i].ID, Contents: docs[i].Contents}}
		}
		return out
	})
}

// serveGEM answers GEM's MessagePack {"query", "topk", "return_scores"}
// with its flat {"result": [{"document", "score"}]}.
func (s *Server) serveGEM(w *respWriter, r *http.Request, fields map[string]json.RawMessage) error {
	req, err := s.parseSingle(dGEM, fields)
	if err != nil {
		return err
	}
	return s.answer(w, r, encMsgpack, req, func(res *retrieved) any {
		hits, docs := res.list(0)
		out := make([]gemHit, len(hits))
		for i, h := range hits {
			out[i].Document = docValue{ID: docs[i].ID, Contents: docs[i].Contents}
			if req.returnScores {
				sc := float64(h.Score)
				out[i].Score = &sc
			}
		}
		return resultReply{Result: out}
	})
}

// serveBrowseComp answers BrowseComp-Plus's {"query"} with
// Config.BrowseCompK hits in its flat shape; the title is the passage's
// title line without quotes and the text what follows, as its server
// splits them (format_results_for_api).
func (s *Server) serveBrowseComp(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
	if err := dBrowseComp.checkKeys(fields); err != nil {
		if fe, ok := err.(*rlsearch.FieldError); ok && (fe.Field == "queries" || fe.Field == "topk" || fe.Field == "top_k" || fe.Field == "k") {
			return rlsearch.BadField(fe.Field, "%v; this listener has profile browsecomp (BrowseComp-Plus: {\"query\"} only, k = %d fixed by the server): send other dialects to a searchr1 listener", err, s.cfg.BrowseCompK)
		}
		return err
	}
	q, err := singleQuery(fields, "query")
	if err != nil {
		return err
	}
	req := &retrieveRequest{queries: []string{q}, topK: s.cfg.BrowseCompK}
	if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
		return err
	}
	return s.answer(w, r, enc, req, func(res *retrieved) any {
		_, docs := res.list(0)
		out := make([]bcHit, len(docs))
		for i, d := range docs {
			out[i] = bcHit{Document: bcDoc{Title: d.Title(), Text: d.Text()}, DocID: d.ID}
		}
		return resultReply{Result: out}
	})
}

// handleDialect mounts a dialect endpoint: POST, the body (JSON or
// MessagePack), then serve's reply in the same encoding.
func (s *Server) handleDialect(d *dialect, serve func(*respWriter, *http.Request, bodyEncoding, map[string]json.RawMessage) error) func(*respWriter, *http.Request) {
	return func(w *respWriter, r *http.Request) {
		w.dialect = d.name
		if !s.allowMethod(w, r, http.MethodPost) {
			return
		}
		body, enc, err := s.readDialectBody(w, r, s.cfg.MaxBodyBytes)
		if err == nil {
			var fields map[string]json.RawMessage
			if fields, err = jsonbody.Object(body); err == nil {
				if err = d.checkKeys(fields); err == nil {
					err = serve(w, r, enc, fields)
				}
			}
		}
		if err != nil {
			s.failErr(w, r, err)
		}
	}
}

// resultsLimit is the 413 of /retrieve for n queries asking k hits each.
func (s *Server) resultsLimit(n, k int, field string) error {
	if n*k > s.cfg.MaxResults {
		return rlsearch.TooLarge(field, "too many results: %d queries x %s %d = %d, over the limit of %d results per request; lower %s or split the batch",
			n, field, k, n*k, s.cfg.MaxResults, field)
	}
	return nil
}

// serveQueries answers R1-Searcher's POST /queries {"queries", "k"} with
// {"queries", "answers": [[passage, ...], ...]}; each passage is the
// stored `"Title"\ntext` (its client strips a leading numeric id with
// the regular expression ^\d+\s+, which never matches a quoted title).
func (s *Server) serveQueries(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
	qs, err := fieldStrings(fields, "queries", s.cfg.MaxQueries)
	if err != nil {
		return err
	}
	req := &retrieveRequest{queries: qs}
	if req.topK, err = fieldCount(fields, "k", r1DefaultK, s.cfg.MaxTopK); err != nil {
		return err
	}
	if err := s.resultsLimit(len(qs), req.topK, "k"); err != nil {
		return err
	}
	if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
		return err
	}
	return s.answer(w, r, enc, req, func(res *retrieved) any {
		out := r1Reply{Queries: qs, Answers: make([][]string, len(qs))}
		for i := range qs {
			_, docs := res.list(i)
			out.Answers[i] = make([]string, len(docs))
			for j, d := range docs {
				out.Answers[i][j] = d.Contents
			}
		}
		return out
	})
}

// serveReCall answers ReCall's POST /search {"query", "top_n",
// "return_score"} (batch: POST /batch_search with "query" a list) with
// its bare list of {"id", "contents"}, or with return_score the pair
// [documents, scores] (scripts/serving/retriever_serving.py).
func (s *Server) serveReCall(batch bool) func(*respWriter, *http.Request, bodyEncoding, map[string]json.RawMessage) error {
	return func(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
		var (
			qs  []string
			err error
		)
		if batch {
			qs, err = fieldStrings(fields, "query", s.cfg.MaxQueries)
		} else {
			var q string
			if raw := fields["query"]; jsonbody.Kind(raw) == "list" {
				return rlsearch.BadField("query", `query must be one string on /search; send a list to /batch_search`)
			}
			q, err = fieldString(fields, "query")
			qs = []string{q}
		}
		if err != nil {
			return err
		}
		req := &retrieveRequest{queries: qs}
		if req.topK, err = fieldCount(fields, "top_n", recallDefaultTopN, s.cfg.MaxTopK); err != nil {
			return err
		}
		if err := s.resultsLimit(len(qs), req.topK, "top_n"); err != nil {
			return err
		}
		scores, err := fieldBool(fields, "return_score", false)
		if err != nil {
			return err
		}
		if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
			return err
		}
		return s.answer(w, r, enc, req, func(res *retrieved) any {
			docs := make([][]docValue, len(qs))
			sc := make([][]float64, len(qs))
			for i := range qs {
				hits, ds := res.list(i)
				docs[i] = make([]docValue, len(ds))
				sc[i] = make([]float64, len(ds))
				for j, d := range ds {
					docs[i][j] = docValue{ID: d.ID, Contents: d.Contents}
					sc[i][j] = float64(hits[j].Score)
				}
			}
			switch {
			case !batch && scores:
				return []any{docs[0], sc[0]}
			case !batch:
				return docs[0]
			case scores:
				return []any{docs, sc}
			}
			return docs
		})
	}
}

// serveRerank answers StepSearch's POST /retrieve/rerank {"queries",
// "topk", "topk_retrieval", "return_scores"}: topk_retrieval candidates
// per query from the retriever, scored by Config.Reranker, the topk best
// kept (ties by ascending row), in Search-R1's reply.
func (s *Server) serveRerank(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
	if s.cfg.Reranker == nil {
		return &httpError{status: http.StatusNotFound, kind: kindNotFound, field: "",
			msg: "/retrieve/rerank needs a reranker: start serve with --reranker DIR (StepSearch retrieves topk_retrieval candidates and reranks them)"}
	}
	qs, err := fieldStrings(fields, "queries", s.cfg.MaxQueries)
	if err != nil {
		return err
	}
	req := &retrieveRequest{queries: qs}
	if req.topK, err = fieldCount(fields, "topk_retrieval", stepDefaultCandidates, s.cfg.MaxTopK); err != nil {
		return err
	}
	keep, err := fieldCount(fields, "topk", stepDefaultTopK, s.cfg.MaxTopK)
	if err != nil {
		return err
	}
	if keep > req.topK {
		return rlsearch.BadField("topk", "topk %d is more than topk_retrieval %d: the reranker only reorders the retrieved candidates", keep, req.topK)
	}
	if err := s.resultsLimit(len(qs), req.topK, "topk_retrieval"); err != nil {
		return err
	}
	if req.returnScores, err = fieldBool(fields, "return_scores", false); err != nil {
		return err
	}
	if req.name, req.retriever, err = s.fieldRetriever(fields); err != nil {
		return err
	}
	w.queries = len(qs)
	ctx, nt := withNotes(r.Context())
	res, err := s.retrieveDocs(ctx, req)
	if err == nil {
		res, err = s.rerank(ctx, req, res, keep)
	}
	if _, unavailable := nt.result(); err == nil && unavailable != nil {
		err = unavailable
	}
	if err != nil {
		s.retrieveFailed(w, r, req.name, err)
		return nil
	}
	partial := nt.flag(w)
	if enc == encMsgpack {
		s.writeResultValue(w, r, req, enc, res.hits, res.docs, res.ends, partial)
	} else {
		s.writeResult(w, r, req, res.hits, res.docs, res.ends, partial)
	}
	return nil
}

// rerank scores each query's candidates with Config.Reranker (queries in
// parallel, at most rerankParallel at once) and keeps the keep best, by
// descending score, ties by ascending row. A NaN or infinite score is an
// error naming the query and document.
func (s *Server) rerank(ctx context.Context, req *retrieveRequest, res *retrieved, keep int) (*retrieved, error) {
	n := len(req.queries)
	type ranked struct {
		hits []rlsearch.Hit
		docs []rlsearch.Document
	}
	out := make([]ranked, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rerankParallel)
	for i := range n {
		hits, docs := res.list(i)
		if len(hits) == 0 {
			continue
		}
		g.Go(func() error {
			scores, err := s.cfg.Reranker.Rerank(gctx, req.queries[i], docs)
			if err != nil {
				return fmt.Errorf("rerank queries[%d] %s: %w", i, rlsearch.QuoteShort(req.queries[i]), err)
			}
			if len(scores) != len(docs) {
				return fmt.Errorf("reranker %s returned %d scores for %d documents", s.cfg.Reranker.Name(), len(scores), len(docs))
			}
			order := make([]int, len(docs))
			for j := range order {
				order[j] = j
				if math.IsNaN(float64(scores[j])) || math.IsInf(float64(scores[j]), 0) {
					return fmt.Errorf("reranker %s scored %v for queries[%d] %s, document %q: %w", s.cfg.Reranker.Name(), scores[j], i, rlsearch.QuoteShort(req.queries[i]), docs[j].ID, errBadScore)
				}
			}
			slices.SortStableFunc(order, func(a, b int) int {
				return rlsearch.CompareHits(rlsearch.Hit{Row: hits[a].Row, Score: scores[a]}, rlsearch.Hit{Row: hits[b].Row, Score: scores[b]})
			})
			order = order[:min(keep, len(order))]
			r := ranked{hits: make([]rlsearch.Hit, len(order)), docs: make([]rlsearch.Document, len(order))}
			for j, o := range order {
				r.hits[j] = rlsearch.Hit{Row: hits[o].Row, Score: scores[o]}
				r.docs[j] = docs[o]
			}
			out[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	next := &retrieved{ends: make([]int, n)}
	for i, r := range out {
		next.hits = append(next.hits, r.hits...)
		next.docs = append(next.docs, r.docs...)
		next.ends[i] = len(next.hits)
	}
	return next, nil
}

// handleHealth answers rLLM's GET /health (examples/search
// local_retrieval_tool.py _test_connection checks for 200) with /healthz's
// body.
func (s *Server) handleHealth(w *respWriter, r *http.Request) {
	w.dialect = dRLLM.name
	s.handleHealthz(w, r)
}

// dialectPaths are the built-in paths of the dialects beside /retrieve.
var dialectPaths = []string{"/queries", "/search", "/batch_search", "/retrieve/rerank", "/access", "/health"}

func isBuiltinPath(p string) bool {
	return p == "/" || p == endpointRetrieve || p == endpointHealthz || p == endpointMetrics || slices.Contains(dialectPaths, p)
}

// mountDialects adds the dialect endpoints to mux and returns their paths.
func (s *Server) mountDialects(mux *http.ServeMux) []string {
	mux.Handle("/queries", s.instrument("/queries", s.handleDialect(dR1, s.serveQueries)))
	mux.Handle("/search", s.instrument("/search", s.handleDialect(dReCall, s.serveReCall(false))))
	mux.Handle("/batch_search", s.instrument("/batch_search", s.handleDialect(dReCallBatch, s.serveReCall(true))))
	mux.Handle("/retrieve/rerank", s.instrument("/retrieve/rerank", s.handleDialect(dStepSearch, s.serveRerank)))
	mux.Handle("/access", s.instrument("/access", s.handleDialect(dAccess, s.serveAccess)))
	mux.Handle("/health", s.instrument("/health", s.handleHealth))
	return slices.Clone(dialectPaths)
}
