package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
)

// DefaultTimeout bounds one Retrieve call when ctx has no earlier deadline.
const DefaultTimeout = 60 * time.Second

// Result is one retrieved document and its score (rlsearch.Result, the
// shape of one entry of a /retrieve answer).
type Result = rlsearch.Result

// Errors of Retrieve.
var (
	// ErrStatus: the server answered with a status other than 200 (the
	// error holds the URL, the status and the body).
	ErrStatus = errors.New("client: server error")
	// ErrBadURL: base is not a usable URL.
	ErrBadURL = errors.New("client: bad server URL")
)

// Retrieve sends one /retrieve request for queries to the server at base
// (such as http://127.0.0.1:8000) and returns topk results per query, in
// query order. retriever "" lets the server choose. Errors: a bad base URL,
// ErrBadURL, transport errors, ErrStatus (wrapped), a malformed response or one with
// a wrong number of lists.
func Retrieve(ctx context.Context, base, retriever string, queries []string, topk int) ([][]Result, error) {
	req := map[string]any{"queries": queries, "topk": topk, "return_scores": true}
	if retriever != "" {
		req["retriever"] = retriever
	}
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/retrieve", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadURL, base, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s: %s: %s", ErrStatus, hr.URL, resp.Status, bytes.TrimSpace(raw))
	}
	var out struct {
		Result [][]Result `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: bad response: %v", hr.URL, err)
	}
	if len(out.Result) != len(queries) {
		return nil, fmt.Errorf("%s: %d result lists for %d queries", hr.URL, len(out.Result), len(queries))
	}
	return out.Result, nil
}
