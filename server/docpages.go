package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch"
)

// URLSource is implemented by a DocSource whose corpus gives each passage
// a URL (a "url" field, kept by index.Build as urls.docs); URL returns ""
// for a passage without one. Implementations are safe for concurrent use.
type URLSource interface {
	URL(row int32) (string, error)
}

// DocScanner is implemented by a DocSource that can read every row in
// order faster than Doc row by row (index.Index: one decompression per
// docstore block). The page index is built with it when present.
type DocScanner interface {
	Scan(fn func(row int32, d rlsearch.Document) error) error
}

// Defaults of the page endpoints.
const (
	// DefaultMaxPageBytes bounds one page of POST /access: 128 KiB, about
	// the text of a long Wikipedia article (wiki-18's longest pages run to
	// a few hundred 100-word passages).
	DefaultMaxPageBytes = 128 << 10
	// DefaultMaxAccessBytes bounds one /access reply, urls × max_bytes:
	// 32 MiB.
	DefaultMaxAccessBytes = 32 << 20
	// maxAccessURLs bounds the urls of one /access request.
	maxAccessURLs = 1024
	// markerReserve is the room a page keeps for its truncation marker.
	markerReserve = 128
)

// WikipediaURL is the English Wikipedia URL of an article title, as
// MediaWiki writes it (wfUrlencode): spaces become '_', and every byte
// outside A–Z a–z 0–9 - _ . ~ ; @ $ ! * ( ) , / : is percent-encoded
// (upper-case hex), so "Beveridge, Victoria" is
// https://en.wikipedia.org/wiki/Beveridge,_Victoria.
func WikipediaURL(title string) string {
	const keep = "-_.~;@$!*(),/:"
	t := strings.ReplaceAll(title, " ", "_")
	b := make([]byte, 0, len("https://en.wikipedia.org/wiki/")+len(t)+8)
	b = append(b, "https://en.wikipedia.org/wiki/"...)
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < utf8.RuneSelf && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
	}
	return string(b)
}

// TitleFromURL returns the article title a Wikipedia URL names, in the
// forms ASearcher's agents write (tools/local_retrieval_server.py
// PageAccess.access and qa_synthesis normalize_url):
// https://en.wikipedia.org/wiki/T, .../w/index.php?title=T,
// .../index.php/T; percent-escapes decoded, '_' read as a space. ok is
// false for anything else.
func TitleFromURL(u string) (string, bool) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || p.Host == "" {
		return "", false
	}
	var t string
	switch {
	case strings.HasPrefix(p.Path, "/wiki/"):
		t = strings.TrimPrefix(p.Path, "/wiki/")
	case strings.HasSuffix(p.Path, "/index.php") && p.Query().Has("title"):
		t = p.Query().Get("title")
	case strings.Contains(p.Path, "/index.php/"):
		_, t, _ = strings.Cut(p.Path, "/index.php/")
	default:
		return "", false
	}
	t = strings.TrimSpace(strings.ReplaceAll(t, "_", " "))
	return t, t != ""
}

// urlOf is the URL of document d at row: the corpus's own (URLSource)
// when it has one, else WikipediaURL of its title. A DocRetriever's
// documents (fromRetriever) have no local row: their URL is derived.
func (s *Server) urlOf(row int32, d rlsearch.Document, fromRetriever bool) string {
	if us, ok := s.cfg.Docs.(URLSource); ok && !fromRetriever {
		if u, err := us.URL(row); err == nil && u != "" {
			return u
		}
	}
	return WikipediaURL(d.Title())
}

// hashRow is one entry of a page index table: a 32-bit hash of a key (an
// id, a title or a URL) and a row holding it; tables are sorted by (h,
// row), and every candidate is checked against the document itself, so a
// hash collision costs a lookup, never a wrong answer.
type hashRow struct {
	h   uint32
	row int32
}

// pageIndex finds documents by id and pages by title or URL. It is built
// once, on first use (or by WarmPages), from one scan of the corpus:
// 8 bytes per passage per table (ids, titles, and stored URLs when the
// corpus has them), 168 MB for each table at wiki-18's 21M passages.
// Safe for concurrent use.
type pageIndex struct {
	s    *Server
	seed maphash.Seed

	once  sync.Once
	ready chan struct{}
	err   error

	mu      sync.Mutex // guards rows, started, took
	rows    int
	started time.Time
	took    time.Duration

	ids, titles, urls []hashRow
}

func newPageIndex(s *Server) *pageIndex {
	return &pageIndex{s: s, seed: maphash.MakeSeed(), ready: make(chan struct{})}
}

func (p *pageIndex) hash(key string) uint32 { return uint32(maphash.String(p.seed, key) >> 32) }

// start begins the build in the background (once).
func (p *pageIndex) start() {
	p.once.Do(func() {
		p.mu.Lock()
		p.started = time.Now()
		p.mu.Unlock()
		go func() {
			p.err = p.build()
			p.mu.Lock()
			p.took = time.Since(p.started)
			p.mu.Unlock()
			if p.err != nil {
				p.s.log.Error("server: page index build failed", "err", p.err)
			} else {
				p.s.log.Info("server: page index built", "rows", p.rows, "seconds", p.took.Seconds(), "bytes", p.bytes())
			}
			close(p.ready)
		}()
	})
}

// wait starts the build if needed and waits for it (or ctx).
func (p *pageIndex) wait(ctx context.Context) error {
	if p.s.cfg.NoPageIndex {
		return &httpError{status: http.StatusNotFound, kind: kindNotFound, msg: "pages and documents by id are not served here (a router: its documents live on the shard servers; ask a shard server)"}
	}
	p.start()
	select {
	case <-p.ready:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the page index (built on first use; serve --pages-at-start builds it at start): %w", ctx.Err())
	}
}

func (p *pageIndex) build() error {
	docs := p.s.cfg.Docs
	n := docs.Len()
	us, hasURLs := docs.(URLSource)
	p.ids = make([]hashRow, 0, n)
	p.titles = make([]hashRow, 0, n)
	add := func(row int32, d rlsearch.Document) error {
		p.ids = append(p.ids, hashRow{p.hash(d.ID), row})
		p.titles = append(p.titles, hashRow{p.hash(d.Title()), row})
		if hasURLs {
			u, err := us.URL(row)
			if err != nil {
				return fmt.Errorf("url of row %d: %w", row, err)
			}
			if u != "" {
				p.urls = append(p.urls, hashRow{p.hash(u), row})
			}
		}
		if row%65536 == 0 {
			p.mu.Lock()
			p.rows = int(row)
			p.mu.Unlock()
		}
		return nil
	}
	var err error
	if sc, ok := docs.(DocScanner); ok {
		err = sc.Scan(add)
	} else {
		for row := range int32(n) {
			d, derr := docs.Doc(row)
			if derr == nil {
				derr = add(row, d)
			}
			if derr != nil {
				err = derr
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("build page index: %w", err)
	}
	cmp := func(a, b hashRow) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return int(a.row) - int(b.row)
	}
	slices.SortFunc(p.ids, cmp)
	slices.SortFunc(p.titles, cmp)
	slices.SortFunc(p.urls, cmp)
	p.mu.Lock()
	p.rows = n
	p.mu.Unlock()
	return nil
}

func (p *pageIndex) bytes() int64 {
	return 8 * int64(cap(p.ids)+cap(p.titles)+cap(p.urls))
}

// health is the "pages" field of /healthz.
func (p *pageIndex) health() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.s.cfg.NoPageIndex:
		return map[string]any{"state": "not served"}
	case p.started.IsZero():
		return map[string]any{"state": "not built (built on the first /access or document lookup)"}
	}
	select {
	case <-p.ready:
	default:
		return map[string]any{"state": "building", "rows_done": p.rows, "rows": p.s.cfg.Docs.Len(), "seconds": time.Since(p.started).Seconds()}
	}
	if p.err != nil {
		return map[string]any{"state": "failed", "error": p.err.Error()}
	}
	return map[string]any{"state": "ready", "rows": p.rows, "bytes": p.bytes(), "seconds": p.took.Seconds(), "stored_urls": len(p.urls) > 0}
}

// candidates returns the rows of t whose key hashes like key, ascending.
func (p *pageIndex) candidates(t []hashRow, key string) []int32 {
	h := p.hash(key)
	i, _ := slices.BinarySearchFunc(t, h, func(e hashRow, h uint32) int {
		switch {
		case e.h < h:
			return -1
		case e.h > h:
			return 1
		}
		return 0
	})
	var rows []int32
	for ; i < len(t) && t[i].h == h; i++ {
		rows = append(rows, t[i].row)
	}
	return rows
}

// byID returns the row and document with id.
func (p *pageIndex) byID(id string) (int32, rlsearch.Document, bool, error) {
	for _, row := range p.candidates(p.ids, id) {
		d, err := p.s.cfg.Docs.Doc(row)
		if err != nil {
			return 0, rlsearch.Document{}, false, fmt.Errorf("document of row %d: %w", row, err)
		}
		if d.ID == id {
			return row, d, true, nil
		}
	}
	return 0, rlsearch.Document{}, false, nil
}

// page is a document's page: the passages sharing its title, in corpus
// order.
type page struct {
	title string
	rows  []int32
	docs  []rlsearch.Document
}

// byTitle returns the page of title (empty when no passage has it).
func (p *pageIndex) byTitle(title string) (page, error) {
	pg := page{title: title}
	for _, row := range p.candidates(p.titles, title) {
		d, err := p.s.cfg.Docs.Doc(row)
		if err != nil {
			return page{}, fmt.Errorf("document of row %d: %w", row, err)
		}
		if d.Title() == title {
			pg.rows, pg.docs = append(pg.rows, row), append(pg.docs, d)
		}
	}
	return pg, nil
}

// byURL resolves a URL to a page: a stored URL first, then a Wikipedia
// URL's title (TitleFromURL; then with the case of its first letter
// swapped, which MediaWiki ignores), then the text as a title itself.
func (p *pageIndex) byURL(u string) (page, error) {
	if len(p.urls) > 0 {
		us := p.s.cfg.Docs.(URLSource)
		for _, row := range p.candidates(p.urls, u) {
			if got, err := us.URL(row); err != nil {
				return page{}, fmt.Errorf("url of row %d: %w", row, err)
			} else if got == u {
				d, err := p.s.cfg.Docs.Doc(row)
				if err != nil {
					return page{}, fmt.Errorf("document of row %d: %w", row, err)
				}
				return p.byTitle(d.Title())
			}
		}
	}
	var tries []string
	if t, ok := TitleFromURL(u); ok {
		tries = append(tries, t)
		r, size := utf8.DecodeRuneInString(t)
		switch {
		case unicode.IsLower(r):
			tries = append(tries, string(unicode.ToUpper(r))+t[size:])
		case unicode.IsUpper(r):
			tries = append(tries, string(unicode.ToLower(r))+t[size:])
		}
	} else if t := strings.TrimSpace(u); t != "" && !strings.Contains(t, "://") {
		tries = append(tries, t)
	}
	for _, t := range tries {
		pg, err := p.byTitle(t)
		if err != nil || len(pg.rows) > 0 {
			return pg, err
		}
	}
	return page{}, nil
}

// accessPage is one page of the /access reply; ASearcher reads
// "contents" (search_utils.py access_async).
type accessPage struct {
	URL       string   `json:"url"`
	Title     string   `json:"title"`
	Contents  string   `json:"contents"`
	IDs       []string `json:"ids"`
	Passages  int      `json:"passages"`
	Truncated bool     `json:"truncated"`
}

// render writes a page as `"Title"\n` and its passages' texts, one per
// line, in corpus order, keeping whole passages while they fit in
// maxBytes (and maxTokens of Config.Tokens, when > 0, counted per passage
// as observations are), then a marker line saying how many were left out;
// marker included, contents never exceeds maxBytes. A first passage that
// alone is too long is cut at a UTF-8 boundary.
func (s *Server) render(pg page, u string, maxBytes, maxTokens int) accessPage {
	head := `"` + pg.title + `"` + "\n"
	out := accessPage{URL: u, Title: pg.title, Passages: len(pg.docs), IDs: []string{}}
	var b strings.Builder
	b.WriteString(head)
	total := len(head)
	for _, d := range pg.docs {
		total += len(d.Text()) + 1
	}
	budget := maxBytes
	if total > maxBytes {
		budget = maxBytes - markerReserve
	}
	tokens, shown := 0, 0
	limit := ""
	for _, d := range pg.docs {
		text := d.Text()
		if b.Len()+len(text)+1 > budget {
			limit = strconv.Itoa(maxBytes) + " bytes"
			if shown == 0 && budget > b.Len()+1 {
				cut := budget - b.Len() - 1
				for cut > 0 && !utf8.RuneStart(text[cut]) {
					cut--
				}
				b.WriteString(text[:cut])
				b.WriteByte('\n')
				out.IDs = append(out.IDs, d.ID)
				shown = 1
			}
			break
		}
		if maxTokens > 0 {
			n := s.cfg.Tokens.CountTokens(text)
			if tokens+n > maxTokens {
				limit = strconv.Itoa(maxTokens) + " tokens"
				break
			}
			tokens += n
		}
		b.WriteString(text)
		b.WriteByte('\n')
		out.IDs = append(out.IDs, d.ID)
		shown++
	}
	if shown < len(pg.docs) {
		out.Truncated = true
		fmt.Fprintf(&b, "[%d more passages not shown: the page is limited to %s]\n", len(pg.docs)-shown, limit)
	}
	out.Contents = b.String()
	return out
}

// serveAccess answers ASearcher's POST /access {"urls": [...]} with
// {"result": [page or null, ...]}, one per URL in order (null: no
// passage has that page). Optional "max_bytes" (≤ Config.MaxPageBytes,
// the default) and "max_tokens" (0 = none) bound each page.
func (s *Server) serveAccess(w *respWriter, r *http.Request, enc bodyEncoding, fields map[string]json.RawMessage) error {
	urls, err := fieldStrings(fields, "urls", maxAccessURLs)
	if err != nil {
		return err
	}
	maxBytes, err := fieldCount(fields, "max_bytes", s.cfg.MaxPageBytes, s.cfg.MaxPageBytes)
	if err != nil {
		return err
	}
	if maxBytes < markerReserve*2 {
		return rlsearch.BadField("max_bytes", "max_bytes must be at least %d (room for a title and the truncation marker), got %d", markerReserve*2, maxBytes)
	}
	maxTokens, err := fieldCount(fields, "max_tokens", 0, 1<<30)
	if err != nil {
		return err
	}
	if maxTokens > 0 && s.cfg.Tokens == nil {
		return rlsearch.BadField("max_tokens", "max_tokens needs a token counter (server.Config.Tokens); this server has none")
	}
	if n := int64(len(urls)) * int64(maxBytes); n > s.cfg.MaxAccessBytes {
		return rlsearch.TooLarge("urls", "%d urls x max_bytes %d = %d bytes, over the limit of %d per request; lower max_bytes or split the batch", len(urls), maxBytes, n, s.cfg.MaxAccessBytes)
	}
	w.queries = len(urls)
	if err := s.pages.wait(r.Context()); err != nil {
		return err
	}
	out := make([]*accessPage, len(urls))
	for i, u := range urls {
		if err := r.Context().Err(); err != nil {
			return err
		}
		pg, err := s.pages.byURL(u)
		if err != nil {
			return err
		}
		if len(pg.docs) == 0 {
			continue
		}
		ap := s.render(pg, s.urlOf(pg.rows[0], pg.docs[0], false), maxBytes, maxTokens)
		out[i] = &ap
	}
	s.writeDialect(w, r, enc, resultReply{Result: out})
	return nil
}

// ErrNoDocument is returned (wrapped) by DocByID for an id no passage has.
var ErrNoDocument = errors.New("server: no document with that id")

// DocPage is a passage found by DocByID: the passage, its URL (as
// /retrieve gives it on an asearcher listener) and its page, every
// passage sharing its title in corpus order (the passage included).
type DocPage struct {
	Doc  rlsearch.Document
	URL  string
	Page []rlsearch.Document
}

// DocByID returns the passage with id, building the page index on first
// use (it waits for it, or ctx). Errors: ErrNoDocument (wrapped, with
// rlsearch.ErrBadInput), ctx's, or a document-store failure. Safe for
// concurrent use.
func (s *Server) DocByID(ctx context.Context, id string) (DocPage, error) {
	if err := s.pages.wait(ctx); err != nil {
		return DocPage{}, err
	}
	row, d, ok, err := s.pages.byID(id)
	if err != nil {
		return DocPage{}, err
	}
	if !ok {
		return DocPage{}, fmt.Errorf("%w %q: %w", ErrNoDocument, id, rlsearch.ErrBadInput)
	}
	pg, err := s.pages.byTitle(d.Title())
	if err != nil {
		return DocPage{}, err
	}
	return DocPage{Doc: d, URL: s.urlOf(row, d, false), Page: pg.docs}, nil
}

// WarmPages starts building the page index (ids, titles, URLs) in the
// background, so that the first /access or DocByID does not wait for it;
// /healthz "pages" shows its progress. A no-op after the first call.
func (s *Server) WarmPages() {
	if !s.cfg.NoPageIndex {
		s.pages.start()
	}
}
