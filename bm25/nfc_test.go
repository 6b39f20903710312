package bm25

import (
	"context"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/rlsearch/rlsearch"
)

// TestAnalyzeNFC: canonically equivalent spellings give the same terms
// (issue 13: "Beyonce" + U+0301 found nothing while "Beyoncé" was rank 1),
// and the terms are those of the composed form.
func TestAnalyzeNFC(t *testing.T) {
	for _, tc := range []struct{ name, decomposed, composed string }{
		{"issue input: e + combining acute", "Beyonce\u0301", "Beyoncé"},
		{"leading combining mark", "e\u0301cole normale", "école normale"},
		{"diaeresis", "Zoe\u0308 Salda\u0301n\u0303a", "Zoë Saldáña"},
		{"stacked marks in non-canonical order", "Vie\u0302\u0323t Nam", "Vi\u1EC7t Nam"},
		{"Hangul conjoining jamo", "\u1112\u1161\u11ab\u1100\u116e\u11a8", "한국"},
		{"Angstrom sign (singleton)", "\u212Bngstr\u00F6m", "Ångström"},
		{"CJK compatibility ideograph (singleton)", "\uF900", "\u8C48"},
		{"possessive after a combining mark", "Jose\u0301's", "José"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := Analyze(tc.decomposed), Analyze(tc.composed)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("Analyze(%+q) = %q, Analyze(%+q) = %q: want equal and non-empty", tc.decomposed, got, tc.composed, want)
			}
		})
	}
	// NFC is canonical, not compatibility, normalization: the ligature ﬁ
	// stays distinct from "fi", as in Lucene's StandardAnalyzer.
	if a, b := Analyze("\uFB01nal"), Analyze("final"); slices.Equal(a, b) {
		t.Errorf("Analyze(ﬁnal) = Analyze(final) = %q: NFC must not apply compatibility mappings", a)
	}
}

// randomAccented returns a random string over letters, precomposed
// letters, combining marks (often several in a row), Hangul, spaces and
// punctuation: the text on which NFC and NFD differ.
func randomAccented(r *rand.Rand) string {
	pieces := []string{"a", "e", "o", "u", "n", "c", "s", "A", "E", "O", " ", " ", "'s", "-", ".",
		"é", "ñ", "ü", "Å", "ç", "ễ", "ǖ", "ṩ", "\u0301", "\u0300", "\u0308", "\u0323", "\u0302", "\u0327", "\u030A",
		"한", "\u1100\u1161", "\u212B", "\uF900", "ﬁ", "日本", "ΐ", "Ω", "\u2126"}
	var b strings.Builder
	for n := r.IntN(30); n >= 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestAnalyzeNFDPropertySeeded: random strings, their NFD and their NFC
// forms analyse to identical terms.
func TestAnalyzeNFDPropertySeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for i := 0; i < 5000; i++ {
		s := randomAccented(r)
		want := Analyze(s)
		for _, form := range []norm.Form{norm.NFD, norm.NFC} {
			if got := Analyze(form.String(s)); !slices.Equal(got, want) {
				t.Fatalf("string %d %+q: Analyze of its %v form = %q, of itself = %q", i, s, form, got, want)
			}
		}
	}
}

// FuzzAnalyzeNFD: any valid UTF-8 string and its NFD form analyse to the
// same terms. Found cases are kept in testdata/fuzz/FuzzAnalyzeNFD.
func FuzzAnalyzeNFD(f *testing.F) {
	for _, s := range []string{"Beyonce\u0301", "Beyoncé's", "\u212B\uF900", "a" + strings.Repeat("\u0301", 40) + "b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		want := Analyze(s)
		if got := Analyze(norm.NFD.String(s)); !slices.Equal(got, want) {
			t.Fatalf("Analyze(NFD(%+q)) = %q, Analyze of the string = %q", s, got, want)
		}
	})
}

// TestRetrieveNFDIdentically: an index built from the NFD forms of random
// documents and one built from the documents themselves return the same
// hits, with the same scores, for random queries in either form.
func TestRetrieveNFDIdentically(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 2))
	docs := make([]string, 300)
	for i := range docs {
		docs[i] = randomAccented(r) + " " + randomAccented(r)
	}
	open := func(form func(string) string) *Index {
		bd, err := NewBuilder(Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if _, err := bd.Add(form(d)); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(t.TempDir(), "ix.bm25")
		if err := bd.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		ix, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	plain := open(func(s string) string { return s })
	nfd := open(norm.NFD.String)
	for i := 0; i < 300; i++ {
		q := randomAccented(r)
		want := plain.Search(q, 10)
		for name, got := range map[string][]rlsearch.Hit{
			"NFD query, plain index": plain.Search(norm.NFD.String(q), 10),
			"plain query, NFD index": nfd.Search(q, 10),
			"NFD query, NFD index":   nfd.Search(norm.NFD.String(q), 10),
		} {
			if !slices.Equal(got, want) {
				t.Fatalf("query %d %+q, %s: hits %v, want %v", i, q, name, got, want)
			}
		}
	}
}

// TestWikiNFDQuery is the input on the real corpus: the decomposed
// query finds the same passages, in the same order, as the composed one,
// and so do the decomposed forms of the first words of every non-ASCII
// passage.
func TestWikiNFDQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 18k-passage index")
	}
	w := loadWiki(t)
	bd, _ := NewBuilder(Config{})
	for _, c := range w.contents {
		if _, err := bd.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "wiki.bm25")
	if err := bd.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	composed := ix.Search("Beyoncé", 10)
	if len(composed) == 0 {
		t.Fatal(`"Beyoncé" finds nothing in the wiki corpus`)
	}
	if got := ix.Search("Beyonce\u0301", 10); !slices.Equal(got, composed) {
		t.Fatalf(`"Beyonce"+U+0301: %v, "Beyoncé": %v; want the same`, got, composed)
	}
	var queries, nfd []string
	for _, c := range w.contents {
		if isASCII(c) || len(queries) == 500 {
			continue
		}
		f := strings.Fields(c)
		q := strings.Join(f[:min(len(f), 8)], " ")
		if d := norm.NFD.String(q); d != q {
			queries, nfd = append(queries, q), append(nfd, d)
		}
	}
	want, err := ix.SearchBatch(context.Background(), queries, 10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.SearchBatch(context.Background(), nfd, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range queries {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("query %+q: NFD form finds %v, want %v", queries[i], got[i], want[i])
		}
	}
	t.Logf("%d passage-prefix queries with decomposable text retrieve identically in NFD", len(queries))
}

// TestOpenRefusesPreNFCIndex: an intact index whose header lacks FlagNFC
// (written before NFC analysis) is refused with ErrAnalyzer naming the
// file and asking for a rebuild; an unknown flag bit stays corruption.
func TestOpenRefusesPreNFCIndex(t *testing.T) {
	good := smallIndexBytes(t)
	if f := le.Uint32(good[12:]); f != FlagNFC {
		t.Fatalf("new index has flags %#x, want FlagNFC", f)
	}
	for _, tc := range []struct {
		flags uint32
		want  error
	}{{0, ErrAnalyzer}, {FlagNFC | 4, ErrCorrupt}} {
		b := slices.Clone(good)
		le.PutUint32(b[12:], tc.flags)
		le.PutUint32(b[headerSize-4:], crc32.Checksum(b[:headerSize-4], castagnoli))
		p := filepath.Join(t.TempDir(), "old.bm25")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		if !errors.Is(err, tc.want) {
			t.Fatalf("flags %#x: Open error %v, want %v", tc.flags, err, tc.want)
		}
		if tc.want == ErrAnalyzer && (!strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "rebuild")) {
			t.Errorf("flags 0: error %q should name %s and say to rebuild", err, p)
		}
	}
}
