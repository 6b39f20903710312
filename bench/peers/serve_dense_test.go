package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// post sends body to url/retrieve and returns the status and the body.
func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/retrieve", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

type scoredHit struct {
	Document struct {
		ID string `json:"id"`
	} `json:"document"`
	Score float64 `json:"score"`
}

// TestServeDenseAgree builds a dense index of a tiny corpus with the
// generated test model, exports its vectors and the queries' vectors, and
// checks that `rlsearch serve --model` and the Python peer's faiss route
// answer /retrieve with the same shape and the same exact inner-product
// top-1 (ties aside), that the peer encodes a query it was never given
// (torch) to the same top-1, then runs a short dense serve suite end to end.
func TestServeDenseAgree(t *testing.T) {
	requirePython(t, "fastapi", "uvicorn", "xapian", "faiss", "numpy")
	if testing.Short() {
		t.Skip("builds rlsearch, a dense index, and starts two servers")
	}
	o := tinyServeOptions(t, RouteE5)
	o.Model = tinyModel(t)
	if _, err := os.Stat(o.ORTLib); err != nil {
		testutil.RequireNative(t, "ONNX Runtime ("+o.ORTLib+")")
	}
	if err := denseReady(o); err != nil {
		t.Skipf("%v", err)
	}
	ctx := context.Background()
	ix, err := denseIndex(ctx, o, o.Rlsearch, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := readQuestions(o.Questions, 100)
	if err != nil {
		t.Fatal(err)
	}
	vdir, err := denseExport(ctx, o, ix, qs, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := startOurs(ctx, o, o.Rlsearch, ix, o.Model, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer ours.stop()
	peer, err := startSearchR1(ctx, o, vdir, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.stop()

	for _, scores := range []bool{true, false} {
		req := map[string]any{"queries": qs, "topk": 3, "return_scores": scores, "retriever": RouteE5}
		for _, s := range []*server{ours, peer} {
			code, body := post(t, s.url, req)
			if code != 200 {
				t.Fatalf("%s: status %d: %s", s.name, code, body)
			}
			if err := CheckRetrieve(body, len(qs), 3, scores); err != nil {
				t.Fatalf("%s (return_scores=%v): %v\n%s", s.name, scores, err, body)
			}
		}
	}
	var got [2][][]scoredHit
	for i, s := range []*server{ours, peer} {
		_, body := post(t, s.url, map[string]any{"queries": qs, "topk": 3, "return_scores": true, "retriever": RouteE5})
		var ans struct {
			Result [][]scoredHit `json:"result"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			t.Fatal(err)
		}
		got[i] = ans.Result
	}
	agree := 0
	for j, q := range qs {
		a, b := got[0][j][0], got[1][j][0]
		// Same vectors, exact search: the same top-1, unless the top two are
		// tied within fp32 rounding of the query encoding (ours encodes at
		// serve time in a batch of another shape than the export).
		if math.Abs(a.Score-b.Score) > 1e-3*max(1, math.Abs(a.Score)) {
			t.Errorf("query %q: top-1 score rlsearch %g (%s), peer %g (%s)", q, a.Score, a.Document.ID, b.Score, b.Document.ID)
		}
		if a.Document.ID == b.Document.ID {
			agree++
		} else if len(got[0][j]) < 2 || got[0][j][1].Document.ID != b.Document.ID || math.Abs(got[0][j][1].Score-a.Score) > 1e-3 {
			t.Errorf("query %q: top-1 rlsearch %s (%g), peer %s (%g), not a tie", q, a.Document.ID, a.Score, b.Document.ID, b.Score)
		}
	}
	if agree == 0 {
		t.Fatalf("no query with the same top-1 of %d", len(qs))
	}
	t.Logf("top-1 agreement %d/%d", agree, len(qs))

	// The peer encodes at request time (torch, e5_torch.py): a query that was
	// never exported gets an answer, the same top-1 as ours.
	novel := map[string]any{"queries": []string{"a query never exported"}, "topk": 1, "return_scores": true, "retriever": RouteE5}
	var top [2]string
	for i, s := range []*server{ours, peer} {
		code, body := post(t, s.url, novel)
		if code != 200 {
			t.Fatalf("%s: a query never exported: status %d: %s", s.name, code, body)
		}
		var ans struct {
			Result [][]scoredHit `json:"result"`
		}
		if err := json.Unmarshal(body, &ans); err != nil || len(ans.Result) != 1 || len(ans.Result[0]) != 1 {
			t.Fatalf("%s: a query never exported: %v %s", s.name, err, body)
		}
		top[i] = ans.Result[0][0].Document.ID
	}
	if top[0] != top[1] {
		t.Errorf("a query never exported: top-1 rlsearch %s, peer %s", top[0], top[1])
	}
	ours.stop()
	peer.stop()
	runServeSuite(t, ctx, o, RouteE5)
}

// TestWriteVecFile checks the exported .fvecs against ann/vecfile's reader
// (the format faiss and NumPy read, TestAgainstFaissAndNumpy there).
func TestWriteVecFile(t *testing.T) {
	const d = 3
	v := []float32{1, -2, 3.5, 0, float32(math.Pi), -0.25, 1e-30, 7, 8}
	p := filepath.Join(t.TempDir(), "x.fvecs")
	if err := writeVecFile(p, v, d); err != nil {
		t.Fatal(err)
	}
	r, err := vecfile.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if in := r.Info(); in.Count != 3 || in.Dim != d {
		t.Fatalf("info %+v: want 3 rows of dimension %d", in, d)
	}
	got := make([]float32, len(v))
	if n, err := r.Read(got); err != nil || n != 3 {
		t.Fatalf("Read: %d rows, %v", n, err)
	}
	if !slices.Equal(got, v) {
		t.Fatalf("read %v, wrote %v", got, v)
	}
}

// TestDenseReadyMissing: without a model or ONNX Runtime the dense route
// reports ErrMissing naming what to install.
func TestDenseReadyMissing(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libort.so")
	os.WriteFile(lib, nil, 0o644)
	model, full := filepath.Join(dir, "model"), filepath.Join(dir, "full")
	os.MkdirAll(model, 0o755)
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "model.onnx"), nil, 0o644)
	tests := []struct {
		name, model, lib, want string
	}{
		{"no model", "", lib, "make testmodel"},
		{"no model.onnx", model, lib, "make testmodel"},
		{"no ort", full, filepath.Join(dir, "absent.so"), "ONNXRUNTIME_LIB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Model: tc.model, ORTLib: tc.lib}
			err := denseReady(o)
			if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("denseReady = %v, want ErrMissing naming %s", err, tc.want)
			}
		})
	}
}
