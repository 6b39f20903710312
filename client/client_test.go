package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRetrieve(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Queries      []string `json:"queries"`
			TopK         int      `json:"topk"`
			ReturnScores bool     `json:"return_scores"`
			Retriever    string   `json:"retriever"`
		}
		if r.URL.Path != "/retrieve" || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error": "bad request"}`, http.StatusBadRequest)
			return
		}
		if req.Queries[0] == "fail" {
			http.Error(w, `{"error": "boom"}`, http.StatusServiceUnavailable)
			return
		}
		if req.Queries[0] == "short" {
			w.Write([]byte(`{"result": []}`))
			return
		}
		if !req.ReturnScores || req.TopK != 2 || req.Retriever != "bm25" {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"result": [[{"document": {"id": "d1", "contents": "\"T\"\nx"}, "score": 1.5}]]}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	got, err := Retrieve(ctx, srv.URL+"/", "bm25", []string{"q"}, 2)
	if err != nil || len(got) != 1 || len(got[0]) != 1 || got[0][0].Document.ID != "d1" || got[0][0].Score != 1.5 {
		t.Fatalf("Retrieve = %+v, %v; want one list with d1 at 1.5", got, err)
	}
	if _, err := Retrieve(ctx, srv.URL, "bm25", []string{"fail"}, 2); !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("server error: %v, want ErrStatus naming 503 and the body", err)
	}
	if _, err := Retrieve(ctx, srv.URL, "bm25", []string{"short"}, 2); err == nil || !strings.Contains(err.Error(), "0 result lists for 1 queries") {
		t.Fatalf("short response: %v, want a count mismatch error", err)
	}
	if _, err := Retrieve(ctx, "http://[::1", "", []string{"q"}, 2); !errors.Is(err, ErrBadURL) {
		t.Fatalf("bad URL: %v, want ErrBadURL", err)
	}
}
