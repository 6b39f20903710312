package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server"
)

// reopen opens the shipped collection name again with cfg (the shared one
// keeps the defaults).
func reopen(t *testing.T, name string, cfg OpenConfig) *Collection {
	t.Helper()
	shipped(t, name)
	colMu.Lock()
	dir := colDirs[name]
	colMu.Unlock()
	c, err := Open(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestStreamingRankEqualsFullRank: run keeps only the rows the ranking can
// return while SQLite streams them; its answer must equal ranking the full
// row set (rankAll over EvalGo's rows) for every MaxResults, including 1
// and a value below the number of scored rows.
func TestStreamingRankEqualsFullRank(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"amazon_toys", "enron_emails"} {
		for _, m := range []int{1, 3, 17, 100} {
			c := reopen(t, name, OpenConfig{MaxResults: m})
			rng := rand.New(rand.NewPCG(11, uint64(m)))
			for i := range 40 {
				g := &exprGen{c: c, rng: rng}
				p := Program{SQL: "WHERE " + renumber(Format(g.expr(3))), RetrievalList: g.list}
				if i%4 == 0 { // many scored rows and many zero-score rows
					p = Program{SQL: "WHERE " + c.Meta.Schema.ID + " IN <text_0> OR " + c.Meta.Schema.ID + " NOT IN <text_1>",
						RetrievalList: []Retrieval{txt(c.Meta.Schema.Text[0].Name, "the new"), txt(c.Meta.Schema.Text[0].Name, "for")}}
				}
				cp, err := c.Compile(p)
				if err != nil {
					t.Fatalf("%s case %d: %s: %v", name, i, p.SQL, err)
				}
				got := c.ExecuteCompiled(ctx, []*Compiled{cp})[0]
				if got.Err != nil {
					t.Fatalf("%s case %d: %v", name, i, got.Err)
				}
				rows, err := c.EvalGo(ctx, cp)
				if err != nil {
					t.Fatal(err)
				}
				cands, _ := c.retrieveAll(ctx, []*Compiled{cp})
				want := c.rankAll(cp, cands[0], rows)
				if got.Total != want.Total || !slices.Equal(got.Rows, want.Rows) || !slices.Equal(got.Scores, want.Scores) || !slices.Equal(got.IDs, want.IDs) {
					t.Fatalf("%s MaxResults %d case %d: %s\nstreamed total %d rows %v\nfull     total %d rows %v",
						name, m, i, p.SQL, got.Total, got.Rows, want.Total, want.Rows)
				}
			}
		}
	}
}

func TestMaxRows(t *testing.T) {
	ctx := context.Background()
	base := shipped(t, "amazon_toys")
	p := Program{SQL: "WHERE brand = 'Hornby' OR product_id IN <text_0>", RetrievalList: []Retrieval{txt("title", "coach")}}
	res, err := base.Execute(ctx, p)
	if err != nil || res.Total < 3 {
		t.Fatalf("reference program: %v %+v", err, res)
	}
	n := res.Total
	if err := (OpenConfig{MaxRows: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "MaxRows") {
		t.Fatalf("Validate(MaxRows -1) = %v, want an error naming MaxRows", err)
	}
	// Exactly at the limit: runs and equals the default collection's answer.
	at := reopen(t, "amazon_toys", OpenConfig{MaxRows: n})
	got, err := at.Execute(ctx, p)
	if err != nil || got.Total != n || !slices.Equal(got.IDs, res.IDs) {
		t.Fatalf("MaxRows = total %d: %v, total %d", n, err, got.Total)
	}
	// One below: refused, naming the limit, as a bad program over a limit.
	below := reopen(t, "amazon_toys", OpenConfig{MaxRows: n - 1})
	_, err = below.Execute(ctx, p)
	var pe *Error
	for _, want := range []error{ErrTooManyRows, ErrLimit, rlsearch.ErrTooLarge, rlsearch.ErrBadInput} {
		if !errors.Is(err, want) {
			t.Fatalf("MaxRows %d: err %v does not match %v", n-1, err, want)
		}
	}
	if !errors.As(err, &pe) || pe.Field != "sql" || !strings.Contains(err.Error(), "OpenConfig.MaxRows") {
		t.Fatalf("MaxRows %d: err %v, want an *Error on sql naming OpenConfig.MaxRows", n-1, err)
	}

	// Over HTTP: the program's item names the limit and the field; the
	// other programs of the batch still run; the status is not a 5xx.
	svc := NewService(map[string]*Collection{"amazon_toys": below}, ServiceConfig{})
	h := server.EndpointHandler(server.JSON(svc.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	prog, _ := json.Marshal(p)
	body := `{"collection":"amazon_toys","programs":[` + string(prog) + `,{"sql":"WHERE brand = 'Hornby'","retrieval_list":[]}]}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/hybrid/execute", strings.NewReader(body)))
	var out ExecuteResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 || len(out.Results) != 2 {
		t.Fatalf("status %d body %s: %v", rec.Code, rec.Body, err)
	}
	if it := out.Results[0]; it.Field != "programs[0].sql" || !strings.Contains(it.Error, "OpenConfig.MaxRows") || it.IDs != nil {
		t.Fatalf("item 0 = %+v, want an error naming OpenConfig.MaxRows at programs[0].sql", it)
	}
	if it := out.Results[1]; it.Error != "" || it.Total == 0 || it.Total > n-1 {
		t.Fatalf("item 1 = %+v, want a result", it)
	}
	// Through the reward's executor the error is a bad input, not a
	// machine failure.
	if _, err := NewExecutor(map[string]*Collection{"amazon_toys": below}).Execute(ctx, "amazon_toys", prog); !errors.Is(err, rlsearch.ErrTooLarge) {
		t.Fatalf("executor: %v, want ErrTooLarge", err)
	}
}

// TestLikeWildcardPatterns: LIKE is the only pattern matching a program
// reaches (REGEXP and GLOB are rejected by the parser). SQLite's LIKE
// (patternCompare) returns "no match possible" as soon as a '%' finds no
// continuation, which keeps '%a%a…%b' linear-times-pattern instead of
// exponential; the plain-Go oracle (likeMatch) is the single-star
// restart algorithm, O(pattern × text). Patterns at the literal limit
// (512 bytes) with every wildcard kind must run and agree with the oracle.
func TestLikeWildcardPatterns(t *testing.T) {
	ctx := context.Background()
	c := shipped(t, "amazon_toys")
	for _, pat := range []string{
		strings.Repeat("%a", 255) + "%",
		strings.Repeat("%_", 255) + "z",
		strings.Repeat("%e", 200) + "%q%",
		"%" + strings.Repeat("_", 510) + "%",
	} {
		for _, col := range []string{"category", "brand"} {
			p := Program{SQL: "WHERE " + col + " LIKE '" + pat + "'"}
			cp, err := c.Compile(p)
			if err != nil {
				t.Fatalf("%.40s: %v", p.SQL, err)
			}
			res := c.ExecuteCompiled(ctx, []*Compiled{cp})[0]
			if res.Err != nil {
				t.Fatalf("%.40s: %v", p.SQL, res.Err)
			}
			want, err := c.EvalGo(ctx, cp)
			if err != nil || res.Total != len(want) {
				t.Fatalf("%.40s: SQL %d rows, Go %d (%v)", p.SQL, res.Total, len(want), err)
			}
		}
	}
}
