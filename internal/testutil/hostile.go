package testutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// HostileCase is one body every JSON endpoint must refuse the same way.
type HostileCase struct {
	Name        string
	ContentType string // "" means application/json
	Body        []byte
	Status      int
	Field       string // the error's "field"
	Msg         string // a substring of the error's "error"
}

// HostileCases builds the hostile bodies for an endpoint from one of its
// valid bodies (a JSON object whose first key is a field of the endpoint)
// and its body limit in bytes: trailing data, a second object, a form
// Content-Type, a body over the limit, a near-miss of the first key,
// invalid UTF-8, 10,000 nested arrays, an empty body, and a top-level
// list and null.
func HostileCases(valid string, maxBody int64) []HostileCase {
	valid = strings.TrimSpace(valid)
	key := ""
	if strings.HasPrefix(valid, `{"`) {
		key, _, _ = strings.Cut(valid[2:], `"`)
	}
	near := strings.ToUpper(key[:1]) + key[1:]
	if near == key {
		near = strings.ToLower(key[:1]) + key[1:]
	}
	const depth = 10_000
	return []HostileCase{
		{"trailing data", "", []byte(valid + `]]]not json`), 400, "", "unexpected data after the top-level object"},
		{"second object", "", []byte(valid + valid), 400, "", "unexpected data after the top-level object"},
		{"form content type", "application/x-www-form-urlencoded", []byte(valid), 415, "Content-Type", "is not JSON"},
		{"over size", "", []byte(`{"x":"` + strings.Repeat("a", int(maxBody)) + `"}`), 413, "", fmt.Sprintf("request body exceeds %d bytes", maxBody)},
		{"near-miss field", "", []byte(`{"` + near + valid[len(key)+2:]), 400, near, fmt.Sprintf("did you mean %q", key)},
		{"invalid UTF-8", "", []byte(valid[:len(valid)-1] + `,"note":"caf` + "\xe9" + `"}`), 400, "", "not valid UTF-8"},
		{"deep nesting", "", []byte(`{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`), 400, "", "nested deeper than"},
		{"empty body", "", nil, 400, "", "empty request body"},
		{"list", "", []byte(`[` + valid + `]`), 400, "", "must be a JSON object, got list"},
		{"null", "", []byte(`null`), 400, "", "must be a JSON object, got null"},
	}
}

// CheckHostile posts every HostileCases body to path on h and checks the
// status and the error shape: Content-Type application/json and a body
// that is exactly {"error": non-empty string, "field": string}.
func CheckHostile(t *testing.T, h http.Handler, path, valid string, maxBody int64) {
	t.Helper()
	for _, tc := range HostileCases(valid, maxBody) {
		t.Run(tc.Name, func(t *testing.T) {
			ct := tc.ContentType
			if ct == "" {
				ct = "application/json"
			}
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(tc.Body))
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			CheckErrorShape(t, rec.Result(), tc.Status)
			var e struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &e)
			if e.Field != tc.Field || !strings.Contains(e.Error, tc.Msg) {
				t.Errorf("POST %s %s: field %q error %q, want field %q and an error containing %q", path, tc.Name, e.Field, e.Error, tc.Field, tc.Msg)
			}
		})
	}
}

// CheckErrorShape checks that resp has status and the house error body:
// application/json, exactly the keys "error" (non-empty) and "field".
func CheckErrorShape(t *testing.T, resp *http.Response, status int) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %.300s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("error body %.300q is not JSON: %v", body, err)
	}
	msg, ok1 := m["error"].(string)
	_, ok2 := m["field"].(string)
	if len(m) != 2 || !ok1 || !ok2 || msg == "" {
		t.Errorf("error body %s is not {\"error\": non-empty string, \"field\": string}", body)
	}
}
