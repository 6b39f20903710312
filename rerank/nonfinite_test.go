package rerank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// nanWord is the word whose token makes the generated NaN model's logits
// NaN (gen_qwen3.py --nan-token).
const nanWord = " poison"

// nanModel generates the tiny Qwen3 model of variant whose rows holding
// the token of nanWord score NaN, and opens it.
func nanModel(tb testing.TB, variant string) *Reranker {
	tb.Helper()
	tok := qwen3TokenizerPath(tb)
	bpe, err := tokenizer.LoadBPE(tok)
	if err != nil {
		tb.Fatal(err)
	}
	ids := bpe.Encode(nanWord)
	if len(ids) != 1 {
		tb.Fatalf("%q is %d tokens, want 1", nanWord, len(ids))
	}
	dir := genModel(tb, "gen_qwen3.py", "--variant", variant, "--seed", "1", "--tokenizer", tok, "--nan-token", fmt.Sprint(ids[0]))
	r := openTest(tb, Config{Dir: dir, Sessions: 1})
	// The trigger must survive tokenization inside the prompt.
	pair, _ := r.encodePair("q", "a"+nanWord+" here")
	if !slices.Contains(pair, ids[0]) {
		tb.Fatalf("token %d of %q not in the encoded pair", ids[0], nanWord)
	}
	return r
}

var (
	docA = rlsearch.Document{ID: "a", Contents: "\"A\"\nalpha text"}
	docB = rlsearch.Document{ID: "b", Contents: "\"B\"\nbeta text about something else"}
	docZ = rlsearch.Document{ID: "z", Contents: "\"Z\"\na" + nanWord + " in the text"}
)

// TestNonFiniteModelScore: a real ONNX model that emits NaN for one pair
// fails Rerank with a *NonFiniteError naming the query and the document
// (position and id), never a NaN score; pairs without the trigger score
// normally.
func TestNonFiniteModelScore(t *testing.T) {
	for _, variant := range []string{"last", "full"} {
		t.Run(variant, func(t *testing.T) {
			r := nanModel(t, variant)
			ctx := context.Background()
			scores, err := r.Rerank(ctx, "alpha", []rlsearch.Document{docA, docB})
			if err != nil {
				t.Fatalf("pairs without the trigger: %v", err)
			}
			for _, s := range scores {
				if math.IsNaN(float64(s)) {
					t.Fatalf("scores %v: NaN without the trigger token", scores)
				}
			}
			scores, err = r.Rerank(ctx, "alpha", []rlsearch.Document{docA, docZ, docB})
			var nf *NonFiniteError
			if !errors.As(err, &nf) || !errors.Is(err, ErrNonFinite) {
				t.Fatalf("Rerank with a NaN pair = %v, %v; want a *NonFiniteError", scores, err)
			}
			if nf.Doc != 1 || nf.DocID != "z" || nf.Query != "alpha" || !math.IsNaN(float64(nf.Score)) {
				t.Errorf("error %+v, want document 1 (id z) of query alpha, score NaN", *nf)
			}
			for _, m := range []string{`query "alpha"`, `document 1 (id "z")`, "NaN"} {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %s", err, m)
				}
			}
		})
	}
}

// rerankServer mounts newHandler(r) at /rerank of a server.Server, as
// `rlsearch serve --reranker` does, so that /metrics counts it.
func rerankServer(t *testing.T, r rlsearch.Reranker) http.Handler {
	t.Helper()
	svc, err := NewService(r, ServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{
		Retrievers: map[string]rlsearch.Retriever{"none": noRetriever{}},
		Docs:       noDocs{},
		Extra:      map[string]server.Endpoint{"/rerank": server.JSON(svc.Serve, server.EndpointOptions{IgnoreUnknown: true})},
		Registry:   prometheus.NewRegistry(),
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler()
}

// TestNonFiniteRerankEndpoint: /rerank with a model that returns NaN for
// one pair answers 500 (our model's fault, not the client's) with the JSON
// error naming queries[i] and documents[i][j] and the id, with
// return_scores true and false, and /metrics counts an internal error. A
// request without the pair still gets 200.
func TestNonFiniteRerankEndpoint(t *testing.T) {
	r := nanModel(t, "last")
	h := rerankServer(t, r)
	ok := `{"queries": ["alpha"], "documents": [[` + doc("a", docA.Contents) + `]]}`
	if code, body := postRaw(t, h, ok); code != 200 {
		t.Fatalf("without the trigger: %d %s", code, body)
	}
	for i, scores := range []string{"true", "false"} {
		body := `{"queries": ["alpha", "beta"], "documents": [[` + doc("a", docA.Contents) + `], [` +
			doc("b", docB.Contents) + `, ` + doc("b", docB.Contents) + `, ` + doc("z", docZ.Contents) + `]], "return_scores": ` + scores + `}`
		code, out := postRaw(t, h, body)
		if code != http.StatusInternalServerError {
			t.Fatalf("return_scores %s: status %d, want 500; body %s", scores, code, out)
		}
		for _, m := range []string{`queries[1] \"beta\"`, `documents[1][2] (id \"z\")`, "NaN"} {
			if !strings.Contains(out, m) {
				t.Errorf("return_scores %s: error %s does not mention %s", scores, out, m)
			}
		}
		_, metrics := getRaw(t, h, "/metrics")
		want := fmt.Sprintf(`rlsearch_http_errors_total{kind="internal"} %d`, i+1)
		if !strings.Contains(metrics, want) || !strings.Contains(metrics, `rlsearch_http_requests_total{code="500",endpoint="/rerank"}`) {
			t.Errorf("/metrics lacks %s and a 500 on /rerank", want)
		}
	}
}

// nanReranker gives NaN (or +Inf) to documents whose contents hold "nan!"
// (or "inf!") and 1 to the others.
type nanReranker struct{}

func (nanReranker) Name() string { return "nanfake" }

func (nanReranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	out := make([]float32, len(docs))
	for i, d := range docs {
		switch {
		case strings.Contains(d.Contents, "nan!"):
			out[i] = float32(math.NaN())
		case strings.Contains(d.Contents, "inf!"):
			out[i] = float32(math.Inf(-1))
		default:
			out[i] = 1
		}
	}
	return out, nil
}

// TestRerankListsNonFinite: any rlsearch.Reranker's NaN or ±Inf fails
// RerankLists with the request's positions, also behind duplicates (the
// distinct list's position is mapped back to the first candidate).
func TestRerankListsNonFinite(t *testing.T) {
	a := rlsearch.Document{ID: "a", Contents: "x"}
	n := rlsearch.Document{ID: "n", Contents: "nan!"}
	inf := rlsearch.Document{ID: "i", Contents: "inf!"}
	for _, tc := range []struct {
		name    string
		docs    [][]rlsearch.Document
		mention []string
	}{
		{"NaN behind duplicates", [][]rlsearch.Document{{a}, {a, a, a, n, n}}, []string{`queries[1] "q1"`, `documents[1][3] (id "n")`, "NaN"}},
		{"-Inf", [][]rlsearch.Document{{inf}, {a}}, []string{`queries[0] "q0"`, `documents[0][0] (id "i")`, "-Inf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists, err := RerankLists(context.Background(), nanReranker{}, []string{"q0", "q1"}, tc.docs, 3)
			if !errors.Is(err, ErrNonFinite) {
				t.Fatalf("RerankLists = %v, %v; want ErrNonFinite", lists, err)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %s", err, m)
				}
			}
		})
	}
	if _, err := EncodeResult([][]ScoredDocument{{{Document: a, Score: float32(math.NaN())}}}, false); !errors.Is(err, ErrNonFinite) {
		t.Errorf("EncodeResult with a NaN score: %v, want ErrNonFinite (even without scores in the output)", err)
	}
	if out, err := EncodeResult([][]ScoredDocument{{{Document: a, Score: 0.5}}, {}}, true); err != nil || string(out) != `{"result":[[{"document":{"id":"a","contents":"x"},"score":0.5}],[]]}`+"\n" {
		t.Errorf("EncodeResult = %s, %v", out, err)
	}
}

func postRaw(t *testing.T, h http.Handler, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rerank", strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func getRaw(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

type noRetriever struct{}

func (noRetriever) Name() string { return "none" }
func (noRetriever) Retrieve(_ context.Context, qs []string, _ int) ([][]rlsearch.Hit, error) {
	return make([][]rlsearch.Hit, len(qs)), nil
}

type noDocs struct{}

func (noDocs) Len() int { return 0 }
func (noDocs) Doc(row int32) (rlsearch.Document, error) {
	return rlsearch.Document{}, fmt.Errorf("no row %d", row)
}
