package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/utf8x"
)

// strict refuses, before the SDK reads them, POST bodies the SDK would
// take leniently: invalid UTF-8 (encoding/json would turn it into U+FFFD),
// more than one JSON value (a valid message followed by "]]]" or by a
// second message), a value that is neither a message object nor a batch
// array, and nesting deeper than jsonbody.MaxDepth. The answer is 400
// with the house error body {"error", "field"}; the body is then handed
// on unchanged. Bodies over max are left to the SDK's own 413.
func strict(h http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		if err != nil {
			badBody(w, "read request body: "+err.Error())
			return
		}
		if int64(len(body)) <= max {
			if msg := checkMessage(body); msg != "" {
				badBody(w, msg)
				return
			}
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		h.ServeHTTP(w, r)
	})
}

// checkMessage says what is wrong with a JSON-RPC body, "" when nothing.
func checkMessage(body []byte) string {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return "empty request body; want a JSON-RPC message"
	}
	if off := utf8x.InvalidOffset(body); off >= 0 {
		return fmt.Sprintf("request body is not valid UTF-8: byte 0x%02x at byte offset %d", body[off], off)
	}
	if t[0] != '{' && t[0] != '[' {
		return "request body must be a JSON-RPC message (an object) or a batch (an array)"
	}
	depth := 0
	inStr, esc := false, false
	for i, c := range t {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			if depth++; depth > jsonbody.MaxDepth {
				return fmt.Sprintf("invalid JSON: nested deeper than %d arrays and objects at byte offset %d", jsonbody.MaxDepth, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return "invalid JSON: " + err.Error()
	}
	if off := dec.InputOffset(); off < int64(len(t)) {
		return "invalid JSON: unexpected data after the top-level value at byte offset " + strconv.FormatInt(off, 10)
	}
	return ""
}

func badBody(w http.ResponseWriter, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg, "field": ""})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(http.StatusBadRequest)
	w.Write(append(b, '\n'))
}
