package rerank

import (
	"errors"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestReadDocumentsDecodesLikeTheEndpoint: documents for `rlsearch rerank`
// are decoded as /rerank decodes a candidate: extra keys pass, a near-miss
// key or a wrong type is an error naming the line.
func TestReadDocumentsDecodesLikeTheEndpoint(t *testing.T) {
	docs, lines, err := ReadDocuments(strings.NewReader(`{"id": "a", "contents": "x", "score": 1}`+"\n\n"+`{"id": "b", "title": "T", "text": "y"}`), "in")
	if err != nil || len(docs) != 2 || lines[1] != 3 || docs[1].Contents != rlsearch.MakeContents("T", "y") {
		t.Fatalf("valid documents: %v %v %v", docs, lines, err)
	}
	for _, in := range []string{`{"id": "a", "Contents": "x"}`, `{"id": "a", "contents": 5}`} {
		if _, _, err := ReadDocuments(strings.NewReader(in), "in"); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: err %v, want a bad-input error naming line 1", in, err)
		}
	}
}
