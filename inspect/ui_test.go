package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// synthDump writes n synthetic rollouts (formats, answers and programs
// varied with seed 1) and every 17th line broken, and returns the path.
func synthDump(t testing.TB, n int) string {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	var sb strings.Builder
	for i := range n {
		if i%17 == 16 {
			sb.WriteString(`{"id": "broken-` + fmt.Sprint(i) + `", "response": "<answer>` + "\n")
			continue
		}
		ans := []string{"Steven Soderbergh", "France", "no idea", ""}[rng.Intn(4)]
		obs := []string{"Doc 1(Title: Steven Soderbergh) director\nDoc 2(Title: Paris) city\n", "Error (budget_exceeded): call budget exceeded\n", "Doc 1(Title: Lyon) city\n"}[rng.Intn(3)]
		resp := "<code>\nprint(sparse(\"informant\", k=3))\n</code><information>\n" + obs + "</information>"
		if ans != "" {
			resp += "<answer>" + ans + "</answer>"
		}
		if rng.Intn(5) == 0 {
			resp += "<answer>" + ans + "</answer>"
		}
		q := []string{"Who directed The Informant?", "Where is Paris?"}[rng.Intn(2)]
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("s%03d", i), "question": q, "prompt": "Q: " + q, "response": resp})
		sb.Write(line)
		sb.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func getAPI(t *testing.T, h http.Handler, url string) (int, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, url, nil))
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("GET %s: %d, body not JSON: %.200s", url, w.Code, w.Body.String())
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", url, ct)
	}
	return w.Code, m
}

// TestUIConcurrent reads the API from several goroutines while the dump
// loads (503 with Retry-After until it is ready), then checks that every
// goroutine saw the same rows (go test -race covers the locking).
func TestUIConcurrent(t *testing.T) {
	path := synthDump(t, 600)
	d := NewDump(path, newTestAnalyzer(t, readTestGold(t)))
	ui := NewUI(UIConfig{Dumps: []*Dump{d}})
	done := make(chan error, 1)
	go func() { done <- d.Load(context.Background(), LoadConfig{Workers: 3}) }()
	var wg sync.WaitGroup
	pages := make([][]any, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				w := httptest.NewRecorder()
				ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/rows?dump=0&sort=qa.f1&desc=1&limit=20", nil))
				if w.Code == http.StatusServiceUnavailable {
					if w.Header().Get("Retry-After") == "" {
						t.Error("503 without Retry-After")
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				var p map[string]any
				json.Unmarshal(w.Body.Bytes(), &p)
				if w.Code != 200 {
					t.Errorf("rows: %d %v", w.Code, p)
					return
				}
				pages[g] = p["rows"].([]any)
				for k := range 5 {
					ui.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/rollout?dump=0&i=%d", (g*5+k)%8), nil))
				}
				return
			}
		}()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for g := 1; g < 4; g++ {
		if fmt.Sprint(pages[g]) != fmt.Sprint(pages[0]) {
			t.Errorf("goroutine %d saw another page than goroutine 0", g)
		}
	}
	s, _ := d.Summary()
	if s.Bad != 600/17 || s.Rollouts != 600-600/17 {
		t.Errorf("summary: %d rollouts, %d bad; want %d and %d", s.Rollouts, s.Bad, 600-600/17, 600/17)
	}
	for _, b := range s.BadLines {
		if (b.Line-1)%17 != 16 || !strings.Contains(b.Error, "invalid JSON") {
			t.Errorf("bad line %+v: want every 17th line, invalid JSON", b)
		}
	}
}

func TestUIErrors(t *testing.T) {
	d, err := LoadDump(context.Background(), synthDump(t, 40), newTestAnalyzer(t, nil), LoadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	loading := NewDump(filepath.Join(t.TempDir(), "never.jsonl"), newTestAnalyzer(t, nil))
	ui := NewUI(UIConfig{Dumps: []*Dump{d, loading}})
	for _, tc := range []struct {
		url    string
		status int
		field  string
		msg    string
	}{
		{"/api/summary?dump=2", 400, "dump", "2 dumps are loaded"},
		{"/api/summary?dump=x", 400, "dump", "not an integer"},
		{"/api/summary?dump=1", 503, "", "still loading"},
		{"/api/rows?dump=0&limit=501", 400, "limit", "want 1..500"},
		{"/api/rows?dump=0&offset=-1", 400, "offset", "negative"},
		{"/api/rows?dump=0&sort=bogus", 400, "sort", "unknown sort key"},
		{"/api/rows?dump=0&pattern=bogus", 400, "pattern", "unknown pattern"},
		{"/api/rows?dump=0&cell=all", 400, "cell", "GOLD:ANSWER"},
		{"/api/rows?dump=0&bin=qa.em:10", 400, "bin", "KEY:I"},
		{"/api/rows?dump=0&desc=yes", 400, "desc", "want 1 or 0"},
		{"/api/rows?dump=0&top_k=3", 400, "top_k", "unknown parameter"},
		{"/api/rollout?dump=0", 400, "i", "missing parameter i"},
		{"/api/rollout?dump=0&i=99", 400, "i", "the dump has"},
		{"/api/rollout?dump=0&i=0&trace=1", 400, "trace", "no program runtime"},
		{"/api/nothing", 404, "", "no such API"},
		{"/nothing", 404, "", "no such page"},
	} {
		code, body := getAPI(t, ui, tc.url)
		if code != tc.status || body["field"] != tc.field || !strings.Contains(fmt.Sprint(body["error"]), tc.msg) {
			t.Errorf("GET %s: %d %v; want %d, field %q, error saying %q", tc.url, code, body, tc.status, tc.field, tc.msg)
		}
	}
	w := httptest.NewRecorder()
	ui.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/rows?dump=0", strings.NewReader("{}")))
	if w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q; want 405 GET, HEAD", w.Code, w.Header().Get("Allow"))
	}
	for _, p := range []string{"/", "/app.js", "/app.css"} {
		w := httptest.NewRecorder()
		ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		if w.Code != 200 || w.Header().Get("Content-Security-Policy") != uiCSP || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d, CSP %q", p, w.Code, w.Header().Get("Content-Security-Policy"))
		}
	}
}

// Query is checked against a direct filter-and-sort oracle on the rows.
func TestQueryOracle(t *testing.T) {
	d, err := LoadDump(context.Background(), synthDump(t, 300), newTestAnalyzer(t, readTestGold(t)), LoadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := d.Rows()
	s, _ := d.Summary()
	for _, q := range []Query{
		{}, {Limit: 7, Offset: 280}, {Text: "PARIS"}, {Pattern: PatternRepeatedAnswer}, {Code: "budget_exceeded", Sort: "qa.f1", Desc: true},
		{Cell: "all:correct", Sort: "id", Desc: true}, {Bin: "qa.f1:9", Sort: "rpl.coverage"}, {Sort: "search-p1.total", Offset: 30, Limit: 30},
		{Sort: "proretrieval.total"}, {Desc: true, Limit: 500},
	} {
		got, err := query(rows, s, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		var want []int
		for _, r := range rows {
			v, ok := r.Values[strings.SplitN(q.Bin, ":", 2)[0]]
			if q.Text != "" && !strings.Contains(strings.ToLower(r.ID+"\n"+r.Question+"\n"+r.Answer), strings.ToLower(q.Text)) ||
				q.Pattern != "" && !slices.Contains(r.Patterns, q.Pattern) || q.Code != "" && !slices.Contains(r.Codes, q.Code) ||
				q.Cell != "" && r.GoldSeen+":"+r.Outcome != q.Cell || q.Bin != "" && !(ok && v >= 0.9) {
				continue
			}
			want = append(want, r.Index)
		}
		key := func(i int) (float64, bool) {
			switch q.Sort {
			case "", "index":
				return float64(i), true
			case "id":
				return float64(rows[i].IDRank), true
			}
			v, ok := rows[i].Values[q.Sort]
			return v, ok
		}
		// Insertion sort: the plainest stable sort, missing values last.
		for i := 1; i < len(want); i++ {
			for j := i; j > 0; j-- {
				a, oka := key(want[j-1])
				b, okb := key(want[j])
				less := okb && (!oka || (q.Desc && b > a) || (!q.Desc && b < a))
				if !less {
					break
				}
				want[j-1], want[j] = want[j], want[j-1]
			}
		}
		limit := q.Limit
		if limit == 0 {
			limit = DefaultLimit
		}
		want = want[min(q.Offset, len(want)):min(q.Offset+limit, len(want))]
		var gotIdx []int
		for _, r := range got.Rows {
			gotIdx = append(gotIdx, r.Index)
		}
		if !slices.Equal(gotIdx, want) {
			t.Errorf("%+v: rows %v, want %v", q, gotIdx, want)
		}
	}
}

func TestAsciiJSON(t *testing.T) {
	for _, s := range []string{"plain", "café", "日本", "emoji 😀 and 𝄞", "\u2028", "<script>"} {
		b, _ := json.Marshal(s)
		a := asciiJSON(b)
		for _, c := range a {
			if c >= 0x80 {
				t.Fatalf("asciiJSON(%q) = %s: non-ASCII byte", s, a)
			}
		}
		var back string
		if err := json.Unmarshal(a, &back); err != nil || back != s {
			t.Errorf("asciiJSON(%q) = %s decodes to %q (%v)", s, a, back, err)
		}
	}
}

// The report's inline script and style are exactly the embedded assets
// (their CSP hashes must match) and hold nothing that ends the element
// early.
func TestReportAssets(t *testing.T) {
	for _, name := range []string{"app.js", "app.css"} {
		s := strings.ToLower(string(asset(name)))
		if strings.Contains(s, "</script") || strings.Contains(s, "</style") || strings.Contains(s, "<!--") {
			t.Errorf("%s holds a sequence that would end its inline element", name)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if _, err := WriteReport(context.Background(), out, synthDump(t, 30), newTestAnalyzer(t, nil), ReportConfig{Generated: "test"}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	for _, want := range []string{"<script>" + string(asset("app.js")) + "</script>", "<style>" + string(asset("app.css")) + "</style>",
		`content="` + strings.ReplaceAll(ReportCSP(), "'", "&#39;") + `"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %.80q", want)
		}
	}
	if n := strings.Count(string(page), "<script"); n != 6 {
		t.Errorf("report has %d script elements, want 6 (4 data blocks, the app, the rollouts)", n)
	}
}
