package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/server/router"
)

// TestShardRetriesNoRemap: --shard-retries reaches router.Config.Retries
// unchanged (issue 37: the CLI used to map 0 to -1). Its default is
// router.DefaultRetries, 0 is the Config's 0 (the default), and "off" or a
// negative number is rlsearch.Off (no retries).
func TestShardRetriesNoRemap(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, router.DefaultRetries},
		{[]string{"--shard-retries", "0"}, 0},
		{[]string{"--shard-retries", "5"}, 5},
		{[]string{"--shard-retries", "off"}, rlsearch.Off},
		{[]string{"--shard-retries=-1"}, -1},
	} {
		var f routerFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if f.cfg.Retries != tc.want {
			t.Errorf("%v: Config.Retries = %d, want %d (passed through unchanged)", tc.args, f.cfg.Retries, tc.want)
		}
	}
	var f routerFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.bind(fs)
	if err := fs.Parse([]string{"--shard-retries", "many"}); err == nil {
		t.Error(`--shard-retries many: accepted, want a parse error`)
	}
}

// TestIndexK1BNoRemap: `rlsearch index --k1/--b` reach bm25.Config
// unchanged, so the index records what the convention makes of them: 0 is
// the default (Pyserini's 0.9, 0.4), "off" the literal 0.
func TestIndexK1BNoRemap(t *testing.T) {
	tmp := t.TempDir()
	corpus := filepath.Join(tmp, "corpus.jsonl")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	for i, tc := range []struct {
		args   []string
		k1, b  float64
		reason string
	}{
		{nil, bm25.DefaultK1, bm25.DefaultB, "the flags' defaults"},
		{[]string{"--k1", "0", "--b", "0"}, bm25.DefaultK1, bm25.DefaultB, "0 = the default"},
		{[]string{"--k1", "1.2", "--b", "off"}, 1.2, 0, "off = b 0"},
		{[]string{"--k1", "off", "--b", "-1"}, 0, 0, "off and -1 = 0"},
	} {
		dir := filepath.Join(tmp, "idx"+string(rune('a'+i)))
		args := append([]string{"index", "--corpus", corpus, "--out", dir, "--quiet"}, tc.args...)
		if code, out, errs := runCmd(t, args...); code != 0 {
			t.Fatalf("%v: code %d\n%s\n%s", tc.args, code, out, errs)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			BM25 struct{ K1, B float64 } `json:"bm25"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.BM25.K1 != tc.k1 || meta.BM25.B != tc.b {
			t.Errorf("%v: meta.json k1 %v, b %v; want %v, %v (%s)", tc.args, meta.BM25.K1, meta.BM25.B, tc.k1, tc.b, tc.reason)
		}
	}
	if code, _, errs := runCmd(t, "index", "--corpus", corpus, "--out", filepath.Join(tmp, "bad"), "--quiet", "--b", "2"); code == 0 || !strings.Contains(errs, "B = 2") {
		t.Errorf("--b 2: code %d, stderr %q; want a refusal naming B", code, errs)
	}
}
