package app

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/index"
)

// TestVectorFileWithoutModel: an index with a vector file served without
// --model serves BM25 only; that is logged at startup and a request for
// "e5" is a 400 saying --model is missing (fresh-user report: it silently
// answered `unknown retriever "e5"`, and trainers never name the
// retriever, so a forgotten flag trained on BM25 unnoticed).
func TestVectorFileWithoutModel(t *testing.T) {
	tmp := t.TempDir()
	c := filepath.Join(tmp, "corpus.jsonl")
	if err := os.WriteFile(c, []byte(corpusText), 0o644); err != nil {
		t.Fatal(err)
	}
	// Three unit vectors of dimension 4 as .fvecs (int32 dim, then floats).
	var fv bytes.Buffer
	for i := range 3 {
		binary.Write(&fv, binary.LittleEndian, int32(4))
		for j := range 4 {
			x := float32(0)
			if j == i {
				x = 1
			}
			binary.Write(&fv, binary.LittleEndian, math.Float32bits(x))
		}
	}
	vecs := filepath.Join(tmp, "v.fvecs")
	if err := os.WriteFile(vecs, fv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "idx")
	if _, err := index.Build(context.Background(), index.BuildConfig{Corpus: c, Dir: dir, Vectors: vecs, VectorsEncoder: "test-4d"}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	svc, err := New(context.Background(), Config{Index: IndexConfig{Dir: dir}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if !strings.Contains(log.String(), "dense retrieval not served") || !strings.Contains(log.String(), "--model") {
		t.Errorf("startup log says nothing about the unserved vector file:\n%s", log.String())
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/retrieve", strings.NewReader(`{"queries": ["capital"], "retriever": "e5"}`))
	req.Header.Set("Content-Type", "application/json")
	svc.Server.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "--model") {
		t.Errorf("retriever e5 without --model: %d %s, want 400 naming --model", rec.Code, rec.Body)
	}
}
