package inspect_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/rlsearch/rlsearch/inspect"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/sdk"
)

var screenshots = flag.String("screenshots", "", "directory to save the inspector's screenshots in (the README's pictures: -screenshots $PWD/screenshots)")

// chromiumPath finds Debian's chromium-headless-shell or chromium
// ($RLSEARCH_CHROMIUM overrides); without one the test skips, or fails
// with RLSEARCH_REQUIRE_NATIVE=1.
func chromiumPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("RLSEARCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testutil.RequireNative(tb, "Chromium (Debian chromium-headless-shell or chromium; scripts/setup.sh installs it)")
	return ""
}

// browser is one headless Chromium tab; JavaScript exceptions in the page
// are collected and fail the test at cleanup.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	errs []string
}

func newBrowser(tb testing.TB) *browser {
	tb.Helper()
	path := chromiumPath(tb)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(tb.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			b.mu.Lock()
			b.errs = append(b.errs, (&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
			b.mu.Unlock()
		}
	}))
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil { // starts the browser: no timeout on this first call
		cancelC()
		cancelA()
		tb.Fatalf("start %s: %v", path, err)
	}
	tb.Cleanup(func() {
		cancelC()
		cancelA()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errs {
			tb.Errorf("JavaScript exception in the page: %s", e)
		}
	})
	return b
}

func (b *browser) run(tb testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.Fatalf("browser: %v", err)
	}
}

// eval evaluates expr in the page and decodes its JSON value into into
// (nil: ignored).
func (b *browser) eval(tb testing.TB, expr string, into any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		tb.Fatalf("browser: evaluate %.80s: %v", expr, err)
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			tb.Fatalf("browser: %.80s: decode %.200s: %v", expr, raw, err)
		}
	}
}

func (b *browser) renders(tb testing.TB) int {
	var n int
	b.eval(tb, `window.__rl ? window.__rl.renders : 0`, &n)
	return n
}

// waitPainted waits until the page painted view kind after render n+1
// (see app.js, rendered), failing on an error view.
func (b *browser) waitPainted(tb testing.TB, kind string, after int) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var got string
		b.eval(tb, `window.__rl && window.__rl.painted || ""`, &got)
		kindN := strings.SplitN(got, ":", 2)
		if len(kindN) == 2 {
			n, _ := strconv.Atoi(kindN[1])
			if n > after {
				if kindN[0] == "error" {
					var msg string
					b.eval(tb, `(document.querySelector('[data-k=error]')||{}).textContent || ""`, &msg)
					tb.Fatalf("the page shows an error: %s", msg)
				}
				if kindN[0] == kind {
					return
				}
			}
		}
		b.mu.Lock()
		errs := len(b.errs)
		b.mu.Unlock()
		if errs > 0 || time.Now().After(deadline) {
			tb.Fatalf("view %s not painted after render %d (last %q; %d JavaScript exceptions)", kind, after, got, errs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// navigate loads url and waits for view kind.
func (b *browser) navigate(tb testing.TB, url, kind string) {
	tb.Helper()
	b.run(tb, chromedp.Navigate("about:blank"), chromedp.Navigate(url)) // a new document even when only the hash differs
	b.waitPainted(tb, kind, 0)
}

// hash switches the page to #h and waits for view kind.
func (b *browser) hash(tb testing.TB, h, kind string) {
	tb.Helper()
	n := b.renders(tb)
	b.eval(tb, `(h => { if (location.hash === '#' + h) window.__rl.refresh(); else location.hash = h; return true; })(`+strconv.Quote(h)+`)`, nil)
	b.waitPainted(tb, kind, n)
}

// click clicks the first element matching sel and waits for view kind.
func (b *browser) click(tb testing.TB, sel, kind string) {
	tb.Helper()
	n := b.renders(tb)
	b.run(tb, chromedp.Click(chromedp.CSS(sel)))
	b.waitPainted(tb, kind, n)
}

// values reads every [data-k][data-v] element of the page: key → value.
func (b *browser) values(tb testing.TB) map[string]string {
	tb.Helper()
	var s string
	b.eval(tb, `JSON.stringify(Object.fromEntries([...document.querySelectorAll('[data-k][data-v]')].map(e => [e.dataset.k, e.dataset.v])))`, &s)
	m := map[string]string{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func (b *browser) rowIndices(tb testing.TB) []int {
	var is []int
	b.eval(tb, `[...document.querySelectorAll('tr[data-k=row]')].map(e => Number(e.dataset.i))`, &is)
	return is
}

// screenshot saves the viewport as PNG after scrolling the element of
// selector sel ("" = none) into view.
func (b *browser) screenshot(tb testing.TB, name, sel string) {
	tb.Helper()
	if sel != "" {
		b.eval(tb, `document.querySelector(`+strconv.Quote(sel)+`).scrollIntoView(); true`, nil)
	} else {
		b.eval(tb, `window.scrollTo(0, 0); true`, nil)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	dir := *screenshots
	if dir == "" {
		dir = tb.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("screenshot %s: %d bytes", name, len(png))
}

// expect is what the batch view must show, computed from the reward
// endpoints' answers and the generator's knowledge.
type expect struct {
	num    map[string]float64 // data-k → value
	ems    []float64
	f1s    []float64
	vret   [][]int
	total  int
	byPat  map[string][]int // pattern → rollout indices
	byCell map[string][]int
}

func fnum(v any) float64 {
	f, _ := v.(float64)
	return f
}

func computeExpect(gs []genRollout, ep map[string][]map[string]any) expect {
	e := expect{num: map[string]float64{}, byPat: map[string][]int{}, byCell: map[string][]int{}, total: len(gs)}
	e.num["rollouts"], e.num["bad"] = float64(len(gs)), 0
	comp := map[string][]float64{}
	codes := map[string]float64{}
	for i, g := range gs {
		qa, rp, p1 := ep["qa"][i], ep["rpl"][i], ep["search-p1"][i]
		e.ems, e.f1s = append(e.ems, fnum(qa["em"])), append(e.f1s, fnum(qa["f1"]))
		comp["qa.em"] = append(comp["qa.em"], fnum(qa["em"]))
		comp["qa.f1"] = append(comp["qa.f1"], fnum(qa["f1"]))
		comp["qa.contains"] = append(comp["qa.contains"], fnum(qa["contains"]))
		nGold, covered := fnum(rp["n_gold"]), fnum(rp["gold_covered"])
		if nGold > 0 {
			comp["rpl.v_ret"] = append(comp["rpl.v_ret"], fnum(rp["v_ret"]))
			comp["rpl.coverage"] = append(comp["rpl.coverage"], fnum(rp["coverage"]))
		}
		var vt []int
		for _, v := range rp["v_ret_turns"].([]any) {
			vt = append(vt, int(fnum(v)))
		}
		e.vret = append(e.vret, vt)
		for _, k := range []string{"total", "path", "outcome", "format"} {
			comp["search-p1."+k] = append(comp["search-p1."+k], fnum(p1[k]))
		}
		gold := "none"
		switch {
		case nGold == 0:
			gold = "unknown"
		case covered == nGold:
			gold = "all"
		case covered > 0:
			gold = "some"
		}
		ans := "wrong"
		if found, _ := qa["found"].(bool); !found || strings.TrimSpace(qa["answer"].(string)) == "" {
			ans = "none"
		} else if fnum(qa["em"]) == 1 {
			ans = "correct"
		}
		e.num["gold:"+gold+":"+ans]++
		e.byCell[gold+":"+ans] = append(e.byCell[gold+":"+ans], i)
		pats := map[string]bool{"empty_answer": ans == "none", "repeated_answer": g.answer == "repeat",
			"gold_seen_unused": gold == "all" && ans == "wrong", "gold_never_seen": gold == "none", "no_retrieval": len(g.programs) == 0}
		for _, p := range g.programs {
			codes[string(p.res.Code)]++
			switch p.res.Code {
			case "budget_exceeded":
				pats["budget_exceeded"] = true
			case "syntax_error", "runtime_error":
				pats["program_error"] = true
			case "unavailable":
				pats["unavailable"] = true
			}
		}
		for p, on := range pats {
			if on {
				e.byPat[p] = append(e.byPat[p], i)
			}
		}
	}
	for _, p := range []string{"empty_answer", "repeated_answer", "budget_exceeded", "program_error", "unavailable", "no_retrieval", "gold_seen_unused", "gold_never_seen"} {
		e.num["pattern:"+p] = float64(len(e.byPat[p]))
	}
	for c, n := range codes {
		e.num["code:"+c] = n
	}
	for k, vs := range comp {
		sum := 0.0
		bins := make([]float64, 10)
		for _, v := range vs {
			sum += v
			bins[min(max(int(math.Floor(v*10)), 0), 9)]++
		}
		e.num["mean:"+k], e.num["n:"+k] = sum/float64(len(vs)), float64(len(vs))
		for i, c := range bins {
			e.num[fmt.Sprintf("bin:%s:%d", k, i)] = c
		}
	}
	return e
}

// checkBatch compares the batch view's numbers with e.
func checkBatch(t *testing.T, b *browser, e expect) {
	t.Helper()
	got := b.values(t)
	keys := make([]string, 0, len(e.num))
	for k := range e.num {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		want := e.num[k]
		s, ok := got[k]
		if !ok {
			if want != 0 || strings.HasPrefix(k, "mean:") {
				t.Errorf("%s: not shown, want %v", k, want)
			}
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Abs(v-want) > 1e-9 {
			t.Errorf("%s: page shows %q, the reward endpoints give %v", k, s, want)
		}
	}
}

// stableOrder is the indices of vals sorted descending (desc) or
// ascending, ties in index order.
func stableOrder(vals []float64, desc bool) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if desc {
			return cmp.Compare(vals[b], vals[a]) // no NaN among reward values
		}
		return cmp.Compare(vals[a], vals[b])
	})
	return idx
}

// checkTable drives filters, sorting and paging and compares the rows
// shown with the oracle's.
func checkTable(t *testing.T, b *browser, base string, e expect) {
	t.Helper()
	page := func(idx []int, p int) []int { return idx[min(p*50, len(idx)):min((p+1)*50, len(idx))] }
	all := make([]int, e.total)
	for i := range all {
		all[i] = i
	}
	if got := b.rowIndices(t); !slices.Equal(got, page(all, 0)) {
		t.Errorf("first page rows %v, want %v", got, page(all, 0))
	}
	b.click(t, "[data-k=next]", "batch")
	if got := b.rowIndices(t); !slices.Equal(got, page(all, 1)) {
		t.Errorf("after next: rows %v, want %v", got, page(all, 1))
	}
	b.click(t, "[data-k='gold:all:wrong']", "batch")
	if got, want := b.rowIndices(t), page(e.byCell["all:wrong"], 0); !slices.Equal(got, want) {
		t.Errorf("cell all:wrong: rows %v, want %v", got, want)
	}
	for _, tc := range []struct {
		hash string
		want []int
	}{
		{base + "&pattern=repeated_answer", page(e.byPat["repeated_answer"], 0)},
		{base + "&pattern=empty_answer&page=1", page(e.byPat["empty_answer"], 1)},
		{base + "&sort=qa.f1&desc=1", page(stableOrder(e.f1s, true), 0)},
		{base + "&sort=qa.f1&page=3", page(stableOrder(e.f1s, false), 3)},
		{base + "&sort=qa.em&desc=1&page=2", page(stableOrder(e.ems, true), 2)},
	} {
		b.hash(t, tc.hash, "batch")
		if got := b.rowIndices(t); !slices.Equal(got, tc.want) {
			t.Errorf("#%s: rows %v, want %v", tc.hash, got, tc.want)
		}
	}
	b.hash(t, base, "batch")
}

// rolloutHash is the hash of rollout i of the dump of batch hash base.
func rolloutHash(base string, i int) string {
	return strings.Replace(base, "view=batch", "view=rollout", 1) + "&i=" + strconv.Itoa(i)
}

// checkRollout opens rollout i and compares its rewards with the
// endpoints'.
func checkRollout(t *testing.T, b *browser, base string, i int, g genRollout, ep map[string][]map[string]any, e expect) {
	t.Helper()
	b.hash(t, rolloutHash(base, i), "rollout")
	got := b.values(t)
	for _, c := range []struct{ key, kind, field string }{
		{"r:qa.em", "qa", "em"}, {"r:qa.f1", "qa", "f1"}, {"r:rpl.v_ret", "rpl", "v_ret"}, {"r:rpl.coverage", "rpl", "coverage"},
		{"r:search-p1.total", "search-p1", "total"}, {"r:search-p1.path", "search-p1", "path"}, {"r:search-p1.outcome", "search-p1", "outcome"},
	} {
		want := fnum(ep[c.kind][i][c.field])
		v, err := strconv.ParseFloat(got[c.key], 64)
		if err != nil || math.Abs(v-want) > 1e-12 {
			t.Errorf("rollout %d (%s): %s shows %q, /v1/rewards/%s gives %v", i, g.format, c.key, got[c.key], c.kind, want)
		}
	}
	var turnV []int
	b.eval(t, `[...document.querySelectorAll('[data-k=turn-vret]')].map(e => Number(e.dataset.v))`, &turnV)
	if !slices.Equal(turnV, e.vret[i]) && !(len(turnV) == 0 && len(e.vret[i]) == 0) {
		t.Errorf("rollout %d: V_ret per turn %v, /v1/rewards/rpl v_ret_turns %v", i, turnV, e.vret[i])
	}
	var id string
	b.eval(t, `document.querySelector('[data-k=rollout-id]').textContent`, &id)
	if id != g.id {
		t.Errorf("rollout %d: id %q, want %q", i, id, g.id)
	}
}

// writeHostile writes a dump of hostile lines: broken JSON, a list,
// invalid UTF-8, a bad field, a 10 MB observation, HTML and script in
// every field, 5,000 gold answers, a blank line. Lines 2, 3, 5, 6 and 7
// are bad.
func writeHostile(tb testing.TB, path string) {
	tb.Helper()
	x := func(n int) string { return fmt.Sprintf("<img src=x onerror=\"window.__pwned=%d\">", n) }
	html, _ := json.Marshal(map[string]any{
		"id":             `"><svg onload="window.__pwned=1"><b>id</b>`,
		"question":       "<b>bold</b><script>window.__pwned=2</script> who?",
		"golden_answers": []string{x(3), "<script>alert(4)</script>"},
		"gold_ids":       []string{"<script>window.__pwned=5</script>"},
		"turns": []map[string]any{
			{"role": "prompt", "text": "<style>body{display:none}</style>Question: " + x(6)},
			{"role": "model", "text": "<code>\nprint(\"<script>window.__pwned=7</script>\" + '" + x(8) + "')\n</code>"},
			{"role": "observation", "text": "\n<information>\nDoc 1(Title: " + x(9) + ") <iframe src=\"javascript:window.__pwned=10\"></iframe>\n</information>\n",
				"printed_ids": []string{"<script>window.__pwned=11</script>"}, "code": "ok"},
			{"role": "model", "text": "<answer>" + x(12) + "</answer><answer><svg onload=window.__pwned=13></answer>"},
		},
	})
	huge, _ := json.Marshal(map[string]any{
		"id": "huge", "question": "what is huge?", "golden_answers": []string{"big"}, "gold_ids": []string{"wiki-000001"},
		"turns": []map[string]any{
			{"role": "model", "text": "<code>\nprint(sparse(question, k=3))\n</code>"},
			{"role": "observation", "text": "<information>" + strings.Repeat("Doc 1(Title: x) <script>window.__pwned=14</script>"+x(15)+"\n", 10<<20/80) + "</information>"},
			{"role": "model", "text": "<answer>big</answer>"},
		},
	})
	golds := make([]string, 5000)
	for i := range golds {
		golds[i] = "g" + strconv.Itoa(i)
	}
	many, _ := json.Marshal(map[string]any{"id": "many-golds", "golden_answers": golds, "response": "<answer>g1</answer>"})
	lines := []string{
		string(html),
		`{"id": "broken", "response": "<answer>a`,
		`not json at all <script>window.__pwned=16</script>`,
		``,
		`[1, 2, 3]`,
		"{\"id\": \"latin1\", \"response\": \"caf\xe9\"}",
		`{"id": "turns-object", "turns": "nope"}`,
		string(huge),
		string(many),
		`{"id": "last", "question": "q", "golden_answers": ["a"], "response": "<answer>a</answer>"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// checkHostile opens every rollout of the hostile dump (base: its batch
// hash) and checks that nothing executed and everything shows as text.
func checkHostile(t *testing.T, b *browser, base string, scripts int) {
	t.Helper()
	b.hash(t, base, "batch")
	got := b.values(t)
	if got["rollouts"] != "4" || got["bad"] != "5" {
		t.Errorf("rollouts %s, bad %s; want 4 and 5", got["rollouts"], got["bad"])
	}
	var lines []int
	b.eval(t, `[...document.querySelectorAll('[data-k=bad-line]')].map(e => Number(e.dataset.line))`, &lines)
	if !slices.Equal(lines, []int{2, 3, 5, 6, 7}) {
		t.Errorf("bad lines named %v, want [2 3 5 6 7]", lines)
	}
	var errs string
	b.eval(t, `document.body.textContent`, &errs)
	for _, want := range []string{"invalid JSON", "not valid UTF-8", "must be a JSON object, got list", "turns must be a list", "5000 gold answers, at most 1000"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the batch view does not say %q", want)
		}
	}
	safe := func(where string) {
		t.Helper()
		var res struct {
			Pwned   any `json:"pwned"`
			Scripts int `json:"scripts"`
			Foreign int `json:"foreign"`
		}
		b.eval(t, `({pwned: window.__pwned === undefined ? null : window.__pwned, scripts: document.scripts.length,
			foreign: document.querySelectorAll('img, iframe, b, body style, main svg:not([data-k^="hist:"]), [onerror], [onload]').length})`, &res)
		if res.Pwned != nil || res.Scripts != scripts || res.Foreign != 0 {
			t.Errorf("%s: window.__pwned = %v, %d script elements (want %d), %d elements from the dump (want 0)", where, res.Pwned, res.Scripts, scripts, res.Foreign)
		}
	}
	safe("batch view")
	for i := range 4 {
		b.hash(t, rolloutHash(base, i), "rollout")
		safe(fmt.Sprintf("rollout %d", i))
	}
	b.hash(t, rolloutHash(base, 0), "rollout")
	var shown struct{ ID, Q string }
	b.eval(t, `({ID: document.querySelector('[data-k=rollout-id]').textContent, Q: document.querySelector('[data-k=question]').textContent})`, &shown)
	if shown.ID != `"><svg onload="window.__pwned=1"><b>id</b>` || shown.Q != "<b>bold</b><script>window.__pwned=2</script> who?" {
		t.Errorf("rollout 0 shows id %q and question %q; want them as text", shown.ID, shown.Q)
	}
	// The 10 MB observation: shown cut, then whole on request, as text.
	b.hash(t, rolloutHash(base, 1), "rollout")
	var n int
	b.eval(t, `(() => { const btn = [...document.querySelectorAll('[data-k=turn] button')].find(x => x.textContent.startsWith('show all')); btn.click();
		return Math.max(...[...document.querySelectorAll('[data-k=turn] pre')].map(p => p.textContent.length)); })()`, &n)
	if n < 10<<20-200 {
		t.Errorf("the 10 MB observation shows %d characters after 'show all'", n)
	}
	safe("10 MB observation shown whole")
}

// TestBrowser drives a real headless Chromium over /ui/ of an assembled
// server and over the HTML report: a 1,000-rollout dump of real
// wiki_multihop questions (programs run on the real BM25 index, four dump
// formats), every number checked against the reward endpoints, filters,
// sorting and paging against an oracle, programs replayed, edited and
// re-run, mutations searched; then a hostile dump.
//
// It runs without the race detector (make test runs it so, as
// test-browser, after the -race run): under -race the Go side alone takes
// minutes. The concurrency of the code it drives is covered under -race by
// TestUIConcurrent.
func TestBrowser(t *testing.T) {
	if raceEnabled {
		t.Skip("end-to-end browser test: run without -race (make test-browser; make test runs it)")
	}
	chromiumPath(t)
	w := getWiki(t)
	dir := t.TempDir()
	dump, hostile := filepath.Join(dir, "rollouts.jsonl"), filepath.Join(dir, "hostile.jsonl")
	gs := genDump(t, w, dump, 1000)
	writeHostile(t, hostile)
	ts := serveUI(t, w, dump, hostile)
	ep := endpointRewards(t, ts.URL, gs)
	e := computeExpect(gs, ep)
	b := newBrowser(t)
	const base = "view=batch&dump=0"
	// Rollouts to open: one of each format, and a two-program rollout.
	pickIdx := map[string]int{}
	for i, g := range gs {
		key := g.format
		if len(g.programs) == 2 && g.printed {
			typed := true
			for _, p := range g.programs {
				_, err := sdk.Recognize(p.src)
				typed = typed && err == nil && p.res.Code == sdk.CodeOK
			}
			if typed {
				key = "two" // two typed programs that ran: replay, what-if and mutation all apply
			}
		}
		if _, ok := pickIdx[key]; !ok {
			pickIdx[key] = i
		}
	}
	if len(pickIdx) != 5 {
		t.Fatalf("generated dump lacks a format or a two-program rollout: %v", pickIdx)
	}

	t.Run("ui", func(t *testing.T) {
		b.navigate(t, ts.URL+"/ui/", "batch")
		b.screenshot(t, "batch.png", "")
		checkBatch(t, b, e)
		checkTable(t, b, base, e)
		for _, i := range pickIdx {
			checkRollout(t, b, base, i, gs[i], ep, e)
		}
		// Replay: every call with its candidates, equal to the index's own answer.
		two := pickIdx["two"]
		b.hash(t, rolloutHash(base, two), "rollout")
		b.click(t, "[data-k=replay]", "rollout")
		var tr struct {
			Programs int      `json:"programs"`
			Matches  []string `json:"matches"`
			First    []string `json:"first"`
		}
		b.eval(t, `({programs: document.querySelectorAll('[data-k=trace-program]').length,
			matches: [...document.querySelectorAll('[data-k=matches]')].map(e => e.textContent),
			first: [...document.querySelector('[data-k=trace-program] [data-k=cands]').querySelectorAll('tr')].slice(1).map(r => r.children[1].textContent)})`, &tr)
		p0, _ := sdk.Recognize(gs[two].programs[0].src)
		hits, err := w.ix.Retrievers()["bm25"].Retrieve(context.Background(), []string{p0.Queries[0]}, p0.Width)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, h := range hits[0] {
			d, _ := w.ix.Doc(h.Row)
			want = append(want, d.ID)
		}
		if tr.Programs != 2 || !slices.Equal(tr.Matches, []string{"replay = dump observation", "replay = dump observation"}) || !slices.Equal(tr.First, want) {
			t.Errorf("replay: %d programs, matches %q, first call's candidates %v; want 2, both equal to the dump, %v", tr.Programs, tr.Matches, tr.First, want)
		}
		b.screenshot(t, "rollout.png", "[data-k=trace]")

		// What if: a new program, run by /v1/programs/execute, its V_ret by /v1/rewards/rpl.
		g := gs[two]
		code := fmt.Sprintf("docs = sparse(%q, k=10)\nprint(docs[:4])\n", strings.Join(g.q.GoldTitles, " "))
		b.run(t, chromedp.SetValue(chromedp.CSS("[data-k=editor]"), code), chromedp.Click(chromedp.CSS("[data-k=run]")),
			chromedp.WaitVisible(chromedp.CSS("[data-k=whatif-vret]")))
		var exec struct {
			Results []map[string]any `json:"results"`
		}
		postJSON(t, ts.URL+"/v1/programs/execute", map[string]any{"programs": []any{map[string]any{"question": g.q.Question, "code": code}}}, &exec)
		var rr struct {
			Rewards []map[string]any `json:"rewards"`
		}
		postJSON(t, ts.URL+"/v1/rewards/rpl", map[string]any{"rollouts": []any{map[string]any{"id": g.id, "golden_answers": g.q.GoldenAnswers,
			"gold_ids": g.q.GoldPassageIDs, "gold_titles": g.q.GoldTitles, "response": "", "turns": exec.Results}}}, &rr)
		got := b.values(t)
		if got["whatif-vret"] != fmt.Sprint(rr.Rewards[0]["v_ret"]) || got["whatif-coverage"] != fmt.Sprint(rr.Rewards[0]["coverage"]) {
			t.Errorf("what-if shows V_ret %s coverage %s; the endpoints give %v and %v", got["whatif-vret"], got["whatif-coverage"], rr.Rewards[0]["v_ret"], rr.Rewards[0]["coverage"])
		}
		// Verified variants of the last program.
		b.run(t, chromedp.Click(chromedp.CSS("[data-k=mutate]")), chromedp.WaitVisible(chromedp.CSS("[data-k=variants-status]")))
		var mut struct {
			Proposals []struct {
				Status   string `json:"status"`
				Verified []any  `json:"verified"`
			} `json:"proposals"`
		}
		var turns []map[string]string
		var raw map[string]any
		json.Unmarshal(g.line, &raw)
		for _, tu := range raw["turns"].([]any) {
			m := tu.(map[string]any)
			turns = append(turns, map[string]string{"role": m["role"].(string), "text": m["text"].(string)})
		}
		postJSON(t, ts.URL+"/v1/programs/mutate", map[string]any{"trajectories": []any{map[string]any{"id": g.id, "question": g.q.Question, "gold_ids": g.q.GoldPassageIDs, "turns": turns}}}, &mut)
		var status string
		var variants int
		b.eval(t, `document.querySelector('[data-k=variants-status]').textContent`, &status)
		b.eval(t, `document.querySelectorAll('[data-k=variant]').length`, &variants)
		if status != mut.Proposals[0].Status || variants != len(mut.Proposals[0].Verified) {
			t.Errorf("variants: page %s with %d, /v1/programs/mutate %s with %d", status, variants, mut.Proposals[0].Status, len(mut.Proposals[0].Verified))
		}
		b.screenshot(t, "whatif.png", "[data-k=whatif]")
	})

	t.Run("report", func(t *testing.T) {
		gold, err := os.Open(w.questionsPath)
		if err != nil {
			t.Fatal(err)
		}
		g, err := inspect.ReadGold(gold, "questions.jsonl")
		gold.Close()
		if err != nil {
			t.Fatal(err)
		}
		an, err := inspect.NewAnalyzer(inspect.AnalyzerConfig{Gold: g})
		if err != nil {
			t.Fatal(err)
		}
		tracer, err := inspect.NewTracer(w.rt.Config())
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "report.html")
		sum, err := inspect.WriteReport(context.Background(), out, dump, an, inspect.ReportConfig{Tracer: tracer})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Rollouts != 1000 {
			t.Fatalf("report of %d rollouts", sum.Rollouts)
		}
		page, _ := os.ReadFile(out)
		for _, bad := range []string{`src="http`, `href="http`, "<link", "<script src"} {
			if strings.Contains(string(page), bad) {
				t.Errorf("the report references something outside itself: %q", bad)
			}
		}
		b.navigate(t, "file://"+out, "batch")
		checkBatch(t, b, e)
		checkTable(t, b, base, e)
		for _, i := range pickIdx {
			checkRollout(t, b, base, i, gs[i], ep, e)
		}
		var progs int
		b.hash(t, rolloutHash(base, pickIdx["two"]), "rollout")
		b.eval(t, `document.querySelectorAll('[data-k=trace-program]').length`, &progs)
		if progs != 2 {
			t.Errorf("report: %d replayed programs shown, want 2 (--index replays every program)", progs)
		}
		b.screenshot(t, "report.png", "")
	})

	t.Run("hostile", func(t *testing.T) {
		b.navigate(t, ts.URL+"/ui/#view=batch&dump=1", "batch")
		checkHostile(t, b, "view=batch&dump=1", 1)
		an, err := inspect.NewAnalyzer(inspect.AnalyzerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "hostile.html")
		if _, err := inspect.WriteReport(context.Background(), out, hostile, an, inspect.ReportConfig{}); err != nil {
			t.Fatal(err)
		}
		b.navigate(t, "file://"+out, "batch")
		checkHostile(t, b, "view=batch&dump=0", 6)
	})
}

// BenchmarkBrowser100k times the inspector on a 100,000-rollout dump (the
// 1,000 generated rollouts, each 100 times with new ids): the served
// page's load, first paint and page switches, and the same for the HTML
// report. Opt-in: go test -run '^$' -bench Browser100k -benchtime 1x ./inspect/
func BenchmarkBrowser100k(b *testing.B) {
	chromiumPath(b)
	w := getWiki(b)
	dir := b.TempDir()
	gs := genDump(b, w, filepath.Join(dir, "1k.jsonl"), 1000)
	big := filepath.Join(dir, "100k.jsonl")
	f, err := os.Create(big)
	if err != nil {
		b.Fatal(err)
	}
	for k := range 100 {
		for _, g := range gs {
			var m map[string]any
			json.Unmarshal(g.line, &m)
			if _, ok := m["id"]; ok {
				m["id"] = fmt.Sprintf("%s-%02d", g.id, k)
			}
			line, _ := json.Marshal(m)
			f.Write(append(line, '\n'))
		}
	}
	f.Close()
	fi, _ := os.Stat(big)
	br := newBrowser(b)
	// switchMs clicks sel and returns the milliseconds until the next view painted.
	switchMs := func(sel string) float64 {
		n := br.renders(b)
		br.eval(b, `window.__rl.t0 = performance.now(); document.querySelector(`+strconv.Quote(sel)+`).click(); true`, nil)
		br.waitPainted(b, "batch", n)
		var ms float64
		br.eval(b, `window.__rl.paintedAt - window.__rl.t0`, &ms)
		return ms
	}
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	pageSwitches := func() float64 {
		var xs []float64
		for range 9 {
			xs = append(xs, switchMs("[data-k=next]"))
		}
		return median(xs)
	}
	for b.Loop() {
		start := time.Now()
		ts := serveUI(b, w, big)
		load := time.Since(start)
		br.navigate(b, ts.URL+"/ui/", "batch")
		var paint float64
		br.eval(b, `window.__rl.paintedAt`, &paint)
		pageMs := pageSwitches()
		sortMs := switchMs("[data-k='sort:qa.f1']")
		b.ReportMetric(load.Seconds(), "serve-load-s")
		b.ReportMetric(paint, "serve-first-paint-ms")
		b.ReportMetric(pageMs, "serve-page-switch-ms")
		b.ReportMetric(sortMs, "serve-sort-ms")

		g, _ := os.Open(w.questionsPath)
		gold, _ := inspect.ReadGold(g, "questions.jsonl")
		g.Close()
		an, err := inspect.NewAnalyzer(inspect.AnalyzerConfig{Gold: gold})
		if err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(dir, "100k.html")
		start = time.Now()
		if _, err := inspect.WriteReport(context.Background(), out, big, an, inspect.ReportConfig{}); err != nil {
			b.Fatal(err)
		}
		write := time.Since(start)
		rfi, _ := os.Stat(out)
		br.navigate(b, "file://"+out, "batch")
		br.eval(b, `window.__rl.paintedAt`, &paint)
		pageMs = pageSwitches()
		sortMs = switchMs("[data-k='sort:qa.f1']")
		var openMs float64
		br.eval(b, `window.__rl.t0 = performance.now(); location.hash = 'view=rollout&dump=0&i=99999'; true`, nil)
		br.waitPainted(b, "rollout", 0)
		br.eval(b, `window.__rl.paintedAt - window.__rl.t0`, &openMs)
		b.ReportMetric(write.Seconds(), "report-write-s")
		b.ReportMetric(float64(rfi.Size())/(1<<20), "report-MiB")
		b.ReportMetric(paint, "report-first-paint-ms")
		b.ReportMetric(pageMs, "report-page-switch-ms")
		b.ReportMetric(sortMs, "report-sort-ms")
		b.ReportMetric(openMs, "report-open-rollout-ms")
		b.ReportMetric(float64(fi.Size())/(1<<20), "dump-MiB")
	}
}
