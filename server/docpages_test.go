package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
)

func TestWikipediaURL(t *testing.T) {
	for title, want := range map[string]string{
		"Beveridge, Victoria":    "https://en.wikipedia.org/wiki/Beveridge,_Victoria",
		"The Informant!":         "https://en.wikipedia.org/wiki/The_Informant!",
		"AC/DC":                  "https://en.wikipedia.org/wiki/AC/DC",
		"Björn Borg":             "https://en.wikipedia.org/wiki/Bj%C3%B6rn_Borg",
		"Rock & roll":            "https://en.wikipedia.org/wiki/Rock_%26_roll",
		"What's Up? (song)":      "https://en.wikipedia.org/wiki/What%27s_Up%3F_(song)",
		`"Quote" 100%`:           "https://en.wikipedia.org/wiki/%22Quote%22_100%25",
		"C++":                    "https://en.wikipedia.org/wiki/C%2B%2B",
		"Robin Hood (2018 film)": "https://en.wikipedia.org/wiki/Robin_Hood_(2018_film)",
	} {
		if got := WikipediaURL(title); got != want {
			t.Errorf("WikipediaURL(%q) = %s, want %s", title, got, want)
		}
		back, ok := TitleFromURL(want)
		if !ok || back != title {
			t.Errorf("TitleFromURL(%s) = %q %v, want %q", want, back, ok, title)
		}
	}
	for u, want := range map[string]string{
		// ASearcher's pages file form and its normalisations (tools/local_retrieval_server.py).
		"https://en.wikipedia.org/w/index.php?title=Beveridge,%20Victoria": "Beveridge, Victoria",
		"https://en.wikipedia.org/w/index.php/Beveridge,_Victoria":         "Beveridge, Victoria",
		"https://en.wikipedia.org/w/index.php?title=Robin+Hood":            "Robin Hood",
		"http://de.wikipedia.org/wiki/Berlin":                              "Berlin",
		"not a url":                                                        "",
		"https://example.com/page":                                         "",
	} {
		got, ok := TitleFromURL(u)
		if got != want || ok != (want != "") {
			t.Errorf("TitleFromURL(%s) = %q %v, want %q", u, got, ok, want)
		}
	}
}

// pageCorpus has two pages spread over the corpus ("Alpha" at rows 0, 2,
// 5; "Beta" at 1, 4) and one single-passage page, "gamma" in lower case.
var pageCorpus = fakeDocs{
	{ID: "a1", Contents: rlsearch.MakeContents("Alpha", "Alpha one.")},
	{ID: "b1", Contents: rlsearch.MakeContents("Beta", "Beta one.")},
	{ID: "a2", Contents: rlsearch.MakeContents("Alpha", "Alpha two, a longer passage of the first page.")},
	{ID: "g1", Contents: rlsearch.MakeContents("gamma", "Gamma only.")},
	{ID: "b2", Contents: rlsearch.MakeContents("Beta", "Beta two.")},
	{ID: "a3", Contents: rlsearch.MakeContents("Alpha", "Alpha three.")},
}

// urlDocs is pageCorpus with a stored url on the Beta passages.
type urlDocs struct{ fakeDocs }

func (u urlDocs) URL(row int32) (string, error) {
	if u.fakeDocs[row].Title() == "Beta" {
		return "https://example.org/beta", nil
	}
	return "", nil
}

// wordCounter counts words (a stand-in for the policy tokenizer).
type wordCounter struct{}

func (wordCounter) CountTokens(s string) int { return len(strings.Fields(s)) }

func pageServer(t *testing.T, docs DocSource) *Server {
	t.Helper()
	s, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{"alpha": {{Row: 2, Score: 1}}}},
		Docs:       docs, Logger: quietLogger(), Registry: prometheus.NewRegistry(), Tokens: wordCounter{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type accessReply struct {
	Result []*accessPage `json:"result"`
}

func access(t *testing.T, s *Server, body string) accessReply {
	t.Helper()
	rec := post(t, s.Handler(), "/access", "application/json", []byte(body))
	if rec.Code != 200 {
		t.Fatalf("%s: status %d %s", body, rec.Code, rec.Body)
	}
	var r accessReply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAccessPages: a page is every passage sharing the title, in corpus
// order; unknown URLs are null (ASearcher's client reads result["contents"]
// if result is not None); the URL on /retrieve resolves on /access.
func TestAccessPages(t *testing.T) {
	s := pageServer(t, pageCorpus)
	r := access(t, s, `{"urls": ["https://en.wikipedia.org/wiki/Alpha", "https://en.wikipedia.org/w/index.php?title=Beta", "https://en.wikipedia.org/wiki/Nowhere", "https://en.wikipedia.org/wiki/Gamma"]}`)
	if len(r.Result) != 4 || r.Result[2] != nil {
		t.Fatalf("result %+v", r.Result)
	}
	a := r.Result[0]
	if want := "\"Alpha\"\nAlpha one.\nAlpha two, a longer passage of the first page.\nAlpha three.\n"; a.Contents != want || a.Truncated || a.Passages != 3 || strings.Join(a.IDs, ",") != "a1,a2,a3" {
		t.Errorf("Alpha page %+v", a)
	}
	if b := r.Result[1]; b.Contents != "\"Beta\"\nBeta one.\nBeta two.\n" || b.URL != "https://en.wikipedia.org/wiki/Beta" {
		t.Errorf("Beta page %+v", b)
	}
	if g := r.Result[3]; g == nil || g.Title != "gamma" {
		t.Errorf("first letter upper-cased as MediaWiki reads it: %+v", g)
	}
	// The url /retrieve gives on an asearcher listener opens its page.
	rec := post(t, s.ProfileHandler(ProfileASearcher), "/retrieve", "", []byte(`{"queries":["alpha"],"topk":1}`))
	var got struct{ Result [][]struct{ URL string } }
	json.Unmarshal(rec.Body.Bytes(), &got)
	if u := got.Result[0][0].URL; u != "https://en.wikipedia.org/wiki/Alpha" || access(t, s, `{"urls": [`+fmt.Sprintf("%q", u)+`]}`).Result[0] == nil {
		t.Errorf("url %q of /retrieve does not open a page", u)
	}
}

// TestAccessBounds: pages keep whole passages within max_bytes (marker
// included) and max_tokens, then a marker line naming how many were cut.
func TestAccessBounds(t *testing.T) {
	var big fakeDocs
	for i := range 200 {
		big = append(big, rlsearch.Document{ID: fmt.Sprint(i), Contents: rlsearch.MakeContents("Long", fmt.Sprintf("passage %d %s", i, strings.Repeat("wörd ", 20)))})
	}
	s := pageServer(t, big)
	for _, maxBytes := range []int{256, 1000, 4096} {
		p := access(t, s, fmt.Sprintf(`{"urls": ["Long"], "max_bytes": %d}`, maxBytes)).Result[0]
		if len(p.Contents) > maxBytes || !p.Truncated || !utf8.ValidString(p.Contents) || !strings.Contains(p.Contents, fmt.Sprintf("more passages not shown: the page is limited to %d bytes]", maxBytes)) {
			t.Errorf("max_bytes %d: %d bytes, truncated %v: %q", maxBytes, len(p.Contents), p.Truncated, p.Contents[max(0, len(p.Contents)-120):])
		}
		if n := strings.Count(p.Contents, "\n") - 2; n != len(p.IDs) {
			t.Errorf("max_bytes %d: %d passage lines, %d ids", maxBytes, n, len(p.IDs))
		}
	}
	p := access(t, s, `{"urls": ["Long"], "max_tokens": 50}`).Result[0]
	if len(p.IDs) != 2 || !strings.HasSuffix(p.Contents, "[198 more passages not shown: the page is limited to 50 tokens]\n") {
		t.Errorf("max_tokens 50 (22 words a passage): %d passages: %q", len(p.IDs), p.Contents)
	}
	full := access(t, s, `{"urls": ["Long"]}`).Result[0]
	if len(full.Contents) > DefaultMaxPageBytes || len(full.IDs) != 200 || full.Truncated {
		t.Errorf("default bound: %d bytes, %d passages, truncated %v", len(full.Contents), len(full.IDs), full.Truncated)
	}
	rec := post(t, s.Handler(), "/access", "", []byte(`{"urls": [`+strings.Repeat(`"x",`, 300)+`"x"]}`))
	if _, field := errorBody(t, rec.Body.String()); rec.Code != 413 || field != "urls" {
		t.Errorf("301 urls x 128 KiB: %d %s, want 413 naming urls", rec.Code, rec.Body)
	}
}

// TestStoredURLs: a corpus with its own urls gives them on /retrieve and
// resolves them on /access; the others keep the derived form.
func TestStoredURLs(t *testing.T) {
	s := pageServer(t, urlDocs{pageCorpus})
	r := access(t, s, `{"urls": ["https://example.org/beta", "https://en.wikipedia.org/wiki/Alpha"]}`)
	if r.Result[0] == nil || r.Result[0].Title != "Beta" || r.Result[0].URL != "https://example.org/beta" || r.Result[1] == nil {
		t.Errorf("stored url: %+v %+v", r.Result[0], r.Result[1])
	}
}

func TestDocByID(t *testing.T) {
	s := pageServer(t, pageCorpus)
	dp, err := s.DocByID(context.Background(), "a2")
	if err != nil || dp.Doc.ID != "a2" || len(dp.Page) != 3 || dp.Page[0].ID != "a1" || dp.URL != "https://en.wikipedia.org/wiki/Alpha" {
		t.Errorf("DocByID(a2) = %+v, %v", dp, err)
	}
	if _, err := s.DocByID(context.Background(), "zz"); !errors.Is(err, ErrNoDocument) || !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("unknown id: %v", err)
	}
	var h map[string]any
	_, _, body := do(t, s.Handler(), "GET", "/healthz", "")
	json.Unmarshal([]byte(body), &h)
	if p := h["pages"].(map[string]any); p["state"] != "ready" || p["bytes"].(float64) != 8*2*6 {
		t.Errorf("healthz pages %v", p)
	}
}
