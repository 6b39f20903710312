package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/server"
)

// Defaults of HandlerConfig.
const (
	// DefaultRerankTopK is the number of documents kept per query when a
	// request omits rerank_topk or sends null or 0: 3, the rerank_topk
	// default of Search-R1's reranker_server.py (RerankerArguments), which
	// also replaces a falsy rerank_topk with it.
	DefaultRerankTopK = 3
	// DefaultMaxRerankQueries bounds len(queries) per request.
	DefaultMaxRerankQueries = 1024
	// DefaultMaxRerankDocs bounds the documents of one request, all queries
	// together (each is one model pass).
	DefaultMaxRerankDocs = 8192
	// DefaultMaxRerankBody bounds the request body: 32 MiB.
	DefaultMaxRerankBody = 32 << 20
)

// HandlerConfig configures NewHandler. Zero fields take the defaults above.
type HandlerConfig struct {
	DefaultTopK  int
	MaxQueries   int
	MaxDocs      int
	MaxBodyBytes int64
}

// Validate reports the first invalid field.
func (c HandlerConfig) Validate() error {
	switch {
	case c.DefaultTopK < 0:
		return fmt.Errorf("rerank: HandlerConfig.DefaultTopK %d is negative", c.DefaultTopK)
	case c.MaxQueries < 0:
		return fmt.Errorf("rerank: HandlerConfig.MaxQueries %d is negative", c.MaxQueries)
	case c.MaxDocs < 0:
		return fmt.Errorf("rerank: HandlerConfig.MaxDocs %d is negative", c.MaxDocs)
	case c.MaxBodyBytes < 0:
		return fmt.Errorf("rerank: HandlerConfig.MaxBodyBytes %d is negative", c.MaxBodyBytes)
	}
	return nil
}

// RerankRequest is the body of Search-R1's POST /rerank.
//
// documents[i] are the candidates of queries[i]; each candidate is either a
// /retrieve result item {"document": {"id", "contents"}, "score"} or a bare
// document {"id", "contents"} (or {"id", "title", "text"}, the other corpus
// convention).
type RerankRequest struct {
	Queries      []string            `json:"queries"`
	Documents    [][]json.RawMessage `json:"documents"`
	RerankTopK   int                 `json:"rerank_topk"`
	ReturnScores bool                `json:"return_scores"`
}

// ScoredDocument is one result item when return_scores is true.
type ScoredDocument struct {
	Document rlsearch.Document `json:"document"`
	Score    float32           `json:"score"`
}

// requestError is a 4xx with the offending field; status 0 means 400.
type requestError struct {
	msg, field string
	status     int
}

func (e *requestError) Error() string { return e.msg }

// rerankFields are the fields of a /rerank request, by their folded key
// (server.NearMiss); "topk" (the /retrieve name) is a known miss of
// rerank_topk.
var rerankFields = map[string]string{
	"queries":      "queries",
	"documents":    "documents",
	"reranktopk":   "rerank_topk",
	"topk":         "rerank_topk",
	"returnscores": "return_scores",
}

// nearMiss rejects a near-miss of a /rerank field (server.NearMiss, the
// rule of /retrieve).
func nearMiss(fields map[string]json.RawMessage) *requestError {
	key, want, ok := server.NearMiss(fields, rerankFields)
	if !ok {
		return nil
	}
	return &requestError{fmt.Sprintf("unknown field %q: did you mean %q?", key, want), key, 0}
}

// jsonKind names the JSON type of raw by its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// candidate decodes one documents[i][j] item; errors read after the
// item's path (documents[i][j]).
func candidate(raw json.RawMessage) (rlsearch.Document, error) {
	const wantObject = `must be an object with "contents" (or "title"/"text"), got `
	if k := jsonKind(raw); k != "object" {
		return rlsearch.Document{}, errors.New(" " + wantObject + k)
	}
	var item struct {
		Document *struct {
			ID       *string `json:"id"`
			Contents *string `json:"contents"`
			Title    *string `json:"title"`
			Text     *string `json:"text"`
		} `json:"document"`
		ID       *string `json:"id"`
		Contents *string `json:"contents"`
		Title    *string `json:"title"`
		Text     *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &item); err != nil {
		var ute *json.UnmarshalTypeError
		if !errors.As(err, &ute) {
			return rlsearch.Document{}, errors.New(": " + err.Error())
		}
		if ute.Field == "document" {
			return rlsearch.Document{}, fmt.Errorf(".document %s%s", wantObject, ute.Value)
		}
		return rlsearch.Document{}, fmt.Errorf(".%s must be a string, got %s", ute.Field, ute.Value)
	}
	id, contents, title, text := item.ID, item.Contents, item.Title, item.Text
	if item.Document != nil {
		id, contents, title, text = item.Document.ID, item.Document.Contents, item.Document.Title, item.Document.Text
	}
	var d rlsearch.Document
	if id != nil {
		d.ID = *id
	}
	switch {
	case contents != nil:
		d.Contents = *contents
	case text != nil:
		t := ""
		if title != nil {
			t = *title
		}
		d.Contents = rlsearch.MakeContents(t, *text)
	default:
		return d, errors.New(`: document has neither "contents" nor "text"`)
	}
	return d, nil
}

// ParseRerankRequest decodes and checks a /rerank body. Errors are
// *requestError values naming the bad field (4xx); it never panics.
func ParseRerankRequest(body io.Reader, cfg HandlerConfig) (req RerankRequest, docs [][]rlsearch.Document, err error) {
	cfg = cfg.withDefaults()
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return req, nil, &requestError{fmt.Sprintf("request body larger than %d bytes", mbe.Limit), "", http.StatusRequestEntityTooLarge}
		}
		return req, nil, &requestError{"read request body: " + err.Error(), "", 0}
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil {
		if re := nearMiss(fields); re != nil {
			return req, nil, re
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&req); err != nil {
		field := ""
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			field, _, _ = strings.Cut(ute.Field, ".")
		}
		return req, nil, &requestError{"invalid JSON body: " + err.Error(), field, 0}
	}
	if dec.More() {
		return req, nil, &requestError{"trailing data after the JSON body", "", 0}
	}
	switch {
	case req.Queries == nil:
		return req, nil, &requestError{"queries is required (a list of strings)", "queries", 0}
	case len(req.Queries) > cfg.MaxQueries:
		return req, nil, &requestError{fmt.Sprintf("%d queries, at most %d per request", len(req.Queries), cfg.MaxQueries), "queries", 0}
	case req.Documents == nil && len(req.Queries) > 0:
		return req, nil, &requestError{"documents is required (one list of candidates per query)", "documents", 0}
	case len(req.Documents) != len(req.Queries):
		return req, nil, &requestError{fmt.Sprintf("%d document lists for %d queries (want one per query)", len(req.Documents), len(req.Queries)), "documents", 0}
	case req.RerankTopK < 0:
		return req, nil, &requestError{fmt.Sprintf("rerank_topk %d: must be >= 1 (0 or absent means %d)", req.RerankTopK, cfg.DefaultTopK), "rerank_topk", 0}
	}
	if req.RerankTopK == 0 {
		req.RerankTopK = cfg.DefaultTopK
	}
	total := 0
	docs = make([][]rlsearch.Document, len(req.Documents))
	for i, list := range req.Documents {
		total += len(list)
		if total > cfg.MaxDocs {
			return req, nil, &requestError{fmt.Sprintf("more than %d documents in one request", cfg.MaxDocs), "documents", 0}
		}
		docs[i] = make([]rlsearch.Document, len(list))
		for j, raw := range list {
			d, err := candidate(raw)
			if err != nil {
				return req, nil, &requestError{fmt.Sprintf("documents[%d][%d]%v", i, j, err), "documents", 0}
			}
			docs[i][j] = d
		}
	}
	return req, docs, nil
}

func (c HandlerConfig) withDefaults() HandlerConfig {
	if c.DefaultTopK == 0 {
		c.DefaultTopK = DefaultRerankTopK
	}
	if c.MaxQueries == 0 {
		c.MaxQueries = DefaultMaxRerankQueries
	}
	if c.MaxDocs == 0 {
		c.MaxDocs = DefaultMaxRerankDocs
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxRerankBody
	}
	return c
}

// Dedup returns the distinct documents of docs in first-seen order
// (exact duplicates: same id and contents) and, for each input position,
// the index of its document in the result.
func Dedup(docs []rlsearch.Document) (uniq []rlsearch.Document, at []int) {
	seen := make(map[rlsearch.Document]int, len(docs))
	at = make([]int, len(docs))
	for i, d := range docs {
		k, ok := seen[d]
		if !ok {
			k = len(uniq)
			seen[d] = k
			uniq = append(uniq, d)
		}
		at[i] = k
	}
	return uniq, at
}

// RerankLists scores each query against its own documents only, with the
// distinct documents of each list (exact duplicates scored once and listed
// once), and returns per query the top k by descending score (ties: earlier
// candidate first). The result has one list per query, empty (not nil) for a
// query without documents. The queries run concurrently so that a batching
// reranker merges them. Every score in the result is finite: a NaN or ±Inf
// score from r (any rlsearch.Reranker) fails the whole call with a
// *NonFiniteError naming queries[i] and documents[i][j] (the request's
// positions) and the document id; the errors of all failing queries are
// joined.
func RerankLists(ctx context.Context, r rlsearch.Reranker, queries []string, docs [][]rlsearch.Document, k int) ([][]ScoredDocument, error) {
	out := make([][]ScoredDocument, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		out[i] = []ScoredDocument{}
		uniq, at := Dedup(docs[i])
		if len(uniq) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores, err := r.Rerank(ctx, q, uniq)
			if err == nil && len(scores) != len(uniq) {
				err = fmt.Errorf("rerank: %s returned %d scores for %d documents", r.Name(), len(scores), len(uniq))
			}
			if err == nil {
				err = checkFinite(r.Name(), q, uniq, scores)
			}
			var nf *NonFiniteError
			if errors.As(err, &nf) {
				// Name the request's positions: queries[i], documents[i][j]
				// (the first candidate that is this distinct document).
				e := *nf
				e.QueryIndex, e.Query = i, q
				if e.Doc < len(uniq) {
					e.DocID = uniq[e.Doc].ID
					e.Doc = slices.Index(at, e.Doc)
				}
				err = &e
			}
			if err != nil {
				errs[i] = err
				return
			}
			order := make([]int, len(uniq))
			for j := range order {
				order[j] = j
			}
			slices.SortStableFunc(order, func(a, b int) int {
				switch {
				case scores[a] > scores[b]:
					return -1
				case scores[a] < scores[b]:
					return 1
				}
				return 0
			})
			if len(order) > k {
				order = order[:k]
			}
			list := make([]ScoredDocument, len(order))
			for j, o := range order {
				list[j] = ScoredDocument{Document: uniq[o], Score: scores[o]}
			}
			out[i] = list
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// NewHandler serves Search-R1's rerank contract:
//
//	POST /rerank {"queries": [str], "documents": [[doc]], "rerank_topk": int >= 0 (0 or absent: HandlerConfig.DefaultTopK, 3), "return_scores": bool}
//	→ {"result": [[{"document": doc, "score": float}, ...] per query]}
//
// with bare documents when return_scores is false. Each query is scored
// against its own documents only; a query without documents gets [];
// exact duplicate candidates appear once with their own score. Bad input is
// a 4xx with the house JSON error naming the field, including a key that
// misspells a known one ("topk", "rerank_top_k" and "TopK" are a 400
// asking whether rerank_topk was meant; other unknown keys pass).
// Reranker failures are 500 (503 when the request was cancelled),
// including a NaN or ±Inf model score: the served model is at fault, not
// the client, and the JSON error names the query and the document
// (queries[i], documents[i][j], id) — never a 200, whether return_scores is
// true or false. The response is encoded whole before the status is
// written, so an encoding failure is a 500 too, never an empty 200. Safe for
// concurrent use.
func NewHandler(r rlsearch.Reranker, cfg HandlerConfig) (http.Handler, error) {
	if r == nil {
		return nil, errors.New("rerank: NewHandler needs a reranker")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			server.WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
			return
		}
		body, docs, err := ParseRerankRequest(http.MaxBytesReader(w, req.Body, cfg.MaxBodyBytes), cfg)
		if err != nil {
			status, field := http.StatusBadRequest, ""
			var re *requestError
			if errors.As(err, &re) {
				field = re.field
				if re.status != 0 {
					status = re.status
				}
			}
			server.WriteError(w, status, err.Error(), field)
			return
		}
		lists, err := RerankLists(req.Context(), r, body.Queries, docs, body.RerankTopK)
		if err != nil {
			switch {
			case errors.Is(err, rlsearch.ErrBadInput):
				server.WriteError(w, http.StatusBadRequest, err.Error(), "documents")
			case req.Context().Err() != nil:
				server.WriteError(w, http.StatusServiceUnavailable, "request cancelled", "")
			default:
				server.WriteError(w, http.StatusInternalServerError, err.Error(), "")
			}
			return
		}
		out, err := EncodeResult(lists, body.ReturnScores)
		if err != nil {
			server.WriteError(w, http.StatusInternalServerError, err.Error(), "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	}), nil
}

// EncodeResult encodes {"result": lists} (bare documents when scores is
// false) as one JSON line. It fails, rather than writing anything, when a
// score is NaN or ±Inf (naming the query and the document position), so
// that a caller writes a status only once the whole body exists.
func EncodeResult(lists [][]ScoredDocument, scores bool) ([]byte, error) {
	for i, l := range lists {
		for j, sd := range l {
			if f := float64(sd.Score); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: result[%d][%d] (id %q) scored %v", ErrNonFinite, i, j, sd.Document.ID, sd.Score)
			}
		}
	}
	var result any = lists
	if !scores {
		bare := make([][]rlsearch.Document, len(lists))
		for i, l := range lists {
			bare[i] = make([]rlsearch.Document, len(l))
			for j, sd := range l {
				bare[i][j] = sd.Document
			}
		}
		result = bare
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(map[string]any{"result": result}); err != nil {
		return nil, fmt.Errorf("rerank: encode response: %w", err)
	}
	return buf.Bytes(), nil
}
