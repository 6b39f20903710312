package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/recovered"
)

// Defaults of ServiceConfig (DefaultMaxRerankBody: of the HTTP layer).
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

// ServiceConfig configures NewService. Zero fields take the defaults
// above. The body limit (DefaultMaxRerankBody) is applied by the HTTP
// layer, server.
type ServiceConfig struct {
	DefaultTopK int
	MaxQueries  int
	MaxDocs     int
}

// Validate reports the first invalid field.
func (c ServiceConfig) Validate() error {
	switch {
	case c.DefaultTopK < 0:
		return fmt.Errorf("rerank: ServiceConfig.DefaultTopK %d is negative", c.DefaultTopK)
	case c.MaxQueries < 0:
		return fmt.Errorf("rerank: ServiceConfig.MaxQueries %d is negative", c.MaxQueries)
	case c.MaxDocs < 0:
		return fmt.Errorf("rerank: ServiceConfig.MaxDocs %d is negative", c.MaxDocs)
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

// FieldAliases makes "topk" (the /retrieve name) a near-miss of
// rerank_topk (jsonbody.Aliaser).
func (RerankRequest) FieldAliases() map[string]string {
	return map[string]string{"topk": "rerank_topk"}
}

// jsonKind names the JSON type of raw by its first byte.
func jsonKind(raw []byte) string {
	if k := jsonbody.Kind(raw); k != "list" {
		return k
	}
	return "array"
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

// check validates a decoded request, replaces a zero rerank_topk by the
// default and parses the candidates.
func (req *RerankRequest) check(cfg ServiceConfig) ([][]rlsearch.Document, error) {
	switch {
	case req.Queries == nil:
		return nil, rlsearch.BadField("queries", "queries is required (a list of strings)")
	case len(req.Queries) > cfg.MaxQueries:
		return nil, rlsearch.TooLarge("queries", "%d queries, at most %d per request", len(req.Queries), cfg.MaxQueries)
	case req.Documents == nil && len(req.Queries) > 0:
		return nil, rlsearch.BadField("documents", "documents is required (one list of candidates per query)")
	case len(req.Documents) != len(req.Queries):
		return nil, rlsearch.BadField("documents", "%d document lists for %d queries (want one per query)", len(req.Documents), len(req.Queries))
	case req.RerankTopK < 0:
		return nil, rlsearch.BadField("rerank_topk", "rerank_topk %d: must be >= 1 (0 or absent means %d)", req.RerankTopK, cfg.DefaultTopK)
	}
	if req.RerankTopK == 0 {
		req.RerankTopK = cfg.DefaultTopK
	}
	total := 0
	docs := make([][]rlsearch.Document, len(req.Documents))
	for i, list := range req.Documents {
		total += len(list)
		if total > cfg.MaxDocs {
			return nil, rlsearch.TooLarge("documents", "more than %d documents in one request", cfg.MaxDocs)
		}
		docs[i] = make([]rlsearch.Document, len(list))
		for j, raw := range list {
			d, err := candidate(raw)
			if err != nil {
				return nil, rlsearch.BadField(fmt.Sprintf("documents[%d][%d]", i, j), "documents[%d][%d]%v", i, j, err)
			}
			docs[i][j] = d
		}
	}
	return docs, nil
}

func (c ServiceConfig) withDefaults() ServiceConfig {
	if c.DefaultTopK == 0 {
		c.DefaultTopK = DefaultRerankTopK
	}
	if c.MaxQueries == 0 {
		c.MaxQueries = DefaultMaxRerankQueries
	}
	if c.MaxDocs == 0 {
		c.MaxDocs = DefaultMaxRerankDocs
	}
	return c
}

// Dedup returns the distinct documents of docs in first-seen order
// (exact duplicates: same id and contents) and, for each input position,
// the index of its document in the result.
func Dedup(docs []rlsearch.Document) (uniq []rlsearch.Document, at []int) {
	return rlsearch.Distinct(docs)
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
			defer recovered.Guard("rerank", &errs[i])
			recovered.Probe("rerank")
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

// Service answers Search-R1's rerank contract as a plain call (the HTTP
// side, POST /rerank, is server's):
//
//	{"queries": [str], "documents": [[doc]], "rerank_topk": int >= 0 (0 or absent: ServiceConfig.DefaultTopK, 3), "return_scores": bool}
//	→ {"result": [[{"document": doc, "score": float}, ...] per query]}
//
// with bare documents when return_scores is false. Safe for concurrent use.
type Service struct {
	r   rlsearch.Reranker
	cfg ServiceConfig
}

// NewService checks cfg and applies its defaults.
func NewService(r rlsearch.Reranker, cfg ServiceConfig) (*Service, error) {
	if r == nil {
		return nil, errors.New("rerank: NewService needs a reranker")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{r: r, cfg: cfg.withDefaults()}, nil
}

// Serve reranks a decoded request. Each query is scored against its own
// documents only; a query without documents gets []; exact duplicate
// candidates appear once with their own score. The answer is the encoded
// JSON line {"result": ...} (EncodeResult), complete before the caller
// writes a status. Errors: *rlsearch.FieldError for bad input (field
// "queries", "documents[i][j]", "rerank_topk"; over MaxQueries or MaxDocs
// it wraps rlsearch.ErrTooLarge), a reranker's rlsearch.ErrBadInput as a
// bad "documents" field, ctx's error, and otherwise the reranker's fault —
// including a NaN or ±Inf model score (*NonFiniteError naming queries[i],
// documents[i][j] and the id), never a result holding one, whatever
// return_scores says.
func (s *Service) Serve(ctx context.Context, req RerankRequest) (json.RawMessage, error) {
	docs, err := req.check(s.cfg)
	if err != nil {
		return nil, err
	}
	lists, err := RerankLists(ctx, s.r, req.Queries, docs, req.RerankTopK)
	if err != nil {
		if errors.Is(err, rlsearch.ErrBadInput) {
			return nil, &rlsearch.FieldError{Field: "documents", Err: err}
		}
		return nil, err
	}
	return EncodeResult(lists, req.ReturnScores)
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
