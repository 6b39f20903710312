package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/internal/canary"
)

// buildSmallDense builds smallCorpus into a fresh directory with the
// 33-dimensional hash encoder the dense backend tests open it with.
func buildSmallDense(t *testing.T) (hashEncoder, string) {
	t.Helper()
	enc := hashEncoder{dim: 33, seed: 1}
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(context.Background(), BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir, Encoder: enc}); err != nil {
		t.Fatal(err)
	}
	return enc, dir
}

// TestDenseBackend opens one index with each ann.Open backend: auto picks
// exact flat for a tiny corpus without a GPU, hnsw builds and caches
// dense.hnsw and answers like flat on 4 passages, a bad name is refused.
func TestDenseBackend(t *testing.T) {
	ctx := context.Background()
	enc, dir := buildSmallDense(t)
	queries := []string{"capital of Germany", "Everest mountain"}
	var flatHits [][]int32
	for _, backend := range []string{"", "flat", "hnsw"} {
		ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: backend})
		if err != nil {
			t.Fatal(err)
		}
		got := ix.DenseSearch.Backend
		want := backend
		if backend == "" {
			want = "flat"
			if got == "gpu" {
				want = "gpu" // auto on a machine with a GPU
			}
		}
		if got != want || ix.DenseSearch.Reason == "" {
			t.Fatalf("DenseBackend %q: backend %q (%s), want %q", backend, got, ix.DenseSearch.Reason, want)
		}
		hits, err := ix.Retrievers()["e5"].Retrieve(ctx, queries, 4)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]int32
		for _, hs := range hits {
			var r []int32
			for _, h := range hs {
				r = append(r, h.Row)
			}
			rows = append(rows, r)
		}
		if flatHits == nil {
			flatHits = rows
		} else if !slices.EqualFunc(rows, flatHits, slices.Equal) {
			t.Errorf("backend %q answers %v, exact flat %v", backend, rows, flatHits)
		}
		ix.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "dense.hnsw")); err != nil {
		t.Errorf("hnsw graph not cached in the index directory: %v", err)
	}
	if _, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "faiss"}); err == nil || !strings.Contains(err.Error(), "Config.Backend") {
		t.Errorf("DenseBackend faiss: %v, want an error naming Config.Backend", err)
	}
	// GPUInt8 over this fp16 shard is refused, with or without a GPU
	// (the int8 case is ann's TestOpenChoosesBackend).
	for _, backend := range []string{"", "gpu"} {
		if _, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: backend, GPUInt8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "needs an int8 vector file, this one is fp16") {
			t.Errorf("DenseBackend %q with GPUInt8 over fp16: %v, want ErrBadInput naming the int8 vector file", backend, err)
		}
	}
	ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "flat", GPUInt8: true})
	if err != nil {
		t.Fatalf("flat ignores GPUInt8: %v", err)
	}
	ix.Close()
}

// TestDenseCanaryHealth: /healthz's dense.canary is the GPU search
// canary's report (ann.Opened.Canary): without a GPU it did not run, and
// with the canary turned off it says so (when auto found a GPU).
func TestDenseCanaryHealth(t *testing.T) {
	ctx := context.Background()
	enc, dir := buildSmallDense(t)
	for _, skip := range []bool{false, true} {
		ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, SkipGPUCanary: skip})
		if err != nil {
			t.Fatal(err)
		}
		dense := ix.Health()["dense"].(map[string]any)
		rep, ok := dense["canary"].(canary.Report)
		if !ok {
			t.Fatalf("dense.canary is %T, want canary.Report", dense["canary"])
		}
		if ix.DenseSearch.Backend == "gpu" {
			if rep.Ran == skip || (skip && !strings.Contains(rep.Skipped, "--gpu-canary=false")) || (!skip && !rep.Passed) {
				t.Errorf("GPU, skip %v: canary %+v", skip, rep)
			}
		} else if rep.Ran || rep.String() != "no search canary" {
			t.Errorf("CPU, skip %v: canary %+v (%s), want not run", skip, rep, rep)
		}
		ix.Close()
	}
}

// TestDenseBackendCompressed: OpenConfig.HNSWCompressed writes dense.f16
// beside the shard on the first open and reuses it, answers like exact
// flat on this tiny corpus and the same on both opens, says so in the
// reason; a truncated dense.f16 is refused naming it, and is left alone.
func TestDenseBackendCompressed(t *testing.T) {
	ctx := context.Background()
	enc, dir := buildSmallDense(t)
	queries := []string{"capital of Germany", "Everest mountain"}
	answer := func(ix *Index) [][]rlsearch.Hit {
		t.Helper()
		hits, err := ix.Retrievers()["e5"].Retrieve(ctx, queries, 4)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	flat, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "flat"})
	if err != nil {
		t.Fatal(err)
	}
	want := answer(flat)
	flat.Close()
	rows := filepath.Join(dir, FP16RowsFile)
	var first [][]rlsearch.Hit
	for _, how := range []string{"written", "reused"} {
		ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "hnsw", HNSWCompressed: true})
		if err != nil {
			t.Fatal(err)
		}
		if r := ix.DenseSearch.Reason; !strings.Contains(r, "compressed: fp16 re-rank from "+rows+" ("+how) {
			t.Errorf("reason %q does not say the rows were %s", r, how)
		}
		got := answer(ix)
		for i := range got {
			if !slices.EqualFunc(got[i], want[i], func(a, b rlsearch.Hit) bool { return a.Row == b.Row }) {
				t.Errorf("%s: query %d: rows %v, exact flat %v", how, i, got[i], want[i])
			}
		}
		if first == nil {
			first = got
		} else if !slices.EqualFunc(got, first, slices.Equal) {
			t.Errorf("second open answers %v, first %v", got, first)
		}
		ix.Close()
	}
	b, err := os.ReadFile(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rows, b[:len(b)-2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "hnsw", HNSWCompressed: true})
	if !errors.Is(err, ann.ErrCorrupt) || !strings.Contains(err.Error(), rows) || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("truncated %s: %v, want ErrCorrupt naming it and saying to delete it", rows, err)
	}
	if c, _ := os.ReadFile(rows); len(c) != len(b)-2 {
		t.Error("the refused rows file was rewritten")
	}
	// Without the flag the same graph serves uncompressed.
	ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, DenseBackend: "hnsw"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ix.DenseSearch.Reason, "compressed") {
		t.Errorf("uncompressed open reason %q", ix.DenseSearch.Reason)
	}
	ix.Close()
}
