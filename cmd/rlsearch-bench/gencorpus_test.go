package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdtest"
	"github.com/rlsearch/rlsearch/index"
)

func TestGencorpusAndCorpusstats(t *testing.T) {
	tmp := t.TempDir()
	seed := filepath.Join(tmp, "seed.jsonl")
	if err := os.WriteFile(seed, []byte(cmdtest.CorpusText), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "gen.jsonl.zst")
	code, stdout, errs := runCmd(t, "gencorpus", "--seed-corpus", seed, "--n", "2000", "--seed", "5", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stdout, "2000 passages (3 real, 1997 generated)") {
		t.Fatalf("gencorpus: code %d\n%s\n%s", code, stdout, errs)
	}
	// The output is a corpus the index builder reads.
	idx := filepath.Join(tmp, "idx")
	meta, err := index.Build(context.Background(), index.BuildConfig{Corpus: out, Dir: idx})
	if err != nil || !strings.Contains(meta.Summary(idx), "indexed 2000 passages") {
		t.Fatalf("index of the generated corpus: %v", err)
	}
	code, stdout, errs = runCmd(t, "corpusstats", seed, out+"@3:", out+"@:3")
	if code != 0 {
		t.Fatalf("corpusstats: code %d\n%s\n%s", code, stdout, errs)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.Contains(lines[0], "gen.jsonl.zst@3:") || !strings.Contains(stdout, "postings with tf>1") {
		t.Fatalf("corpusstats table:\n%s", stdout)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "passages" && (f[1] != "3" || f[2] != "1997" || f[3] != "3") {
			t.Errorf("passages row %q, want 3 1997 3", l)
		}
	}
}

func TestGencorpusUsage(t *testing.T) {
	tmp := t.TempDir()
	seed := filepath.Join(tmp, "seed.jsonl")
	os.WriteFile(seed, []byte(cmdtest.CorpusText), 0o644)
	out := filepath.Join(tmp, "o.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gencorpus", "--out", out}, 2, "--n and --out are required"},
		{[]string{"gencorpus", "--n", "5"}, 2, "--n and --out are required"},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "-5", "--out", out}, 2, "N must be positive"},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "5", "--out", out, "--model", "lda"}, 2, `Model "lda"`},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "5", "--out", out, "--topic-prob", "2"}, 2, "--topic-prob 2: want a probability in (0, 1]"},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "5", "--out", out, "--topic-prob", "0"}, 2, "--topic-prob 0: want a probability in (0, 1]"},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "5", "--out", tmp}, 2, "is a directory"},
		{[]string{"gencorpus", "--seed-corpus", seed, "--n", "5", "--out", out, "extra"}, 2, "unexpected arguments"},
		{[]string{"gencorpus", "--seed-corpus", filepath.Join(tmp, "nope.jsonl"), "--n", "5", "--out", out}, 1, "nope.jsonl"},
		{[]string{"corpusstats"}, 2, "no corpus file given"},
		{[]string{"corpusstats", filepath.Join(tmp, "nope.jsonl")}, 1, "nope.jsonl"},
		{[]string{"corpusstats", seed + "@2:1"}, 2, "want FROM < TO"},
		{[]string{"corpusstats", seed + "@5:"}, 1, "no passages in the selected rows"},
		{[]string{"corpusstats", seed + "@-1:5"}, 2, `bad row range "@-1:5"`},
		{[]string{"corpusstats", seed + "@a:b"}, 2, `bad row range "@a:b"`},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want code %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed gencorpus left its output file")
	}
}
