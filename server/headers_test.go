package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveTCP runs s.ListenAndServe on a loopback port until the test ends
// (then it checks that the server shut down cleanly) and returns the
// address.
func serveTCP(t *testing.T, s *Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	return (<-addrc).String()
}

// TestAmbiguousFramingHeaders (issue 25, item 3) sends raw requests over
// TCP, so that Go's own request parsing runs: a Content-Type sent twice or
// listing two types is a 400 naming the header (the first used to be
// taken); the Content-Length and Transfer-Encoding combinations are
// answered as the package documentation says: identical duplicate
// Content-Lengths are one value (RFC 9110 §8.6), differing ones are Go's
// 400, chunked with a Content-Length is read as chunked (RFC 9112 §6.3),
// two Transfer-Encodings or one other than chunked is Go's 501.
func TestAmbiguousFramingHeaders(t *testing.T) {
	s, _ := newTestServer(t, nil)
	addr := serveTCP(t, s)
	const body = `{"queries": ["berlin"], "topk": 1}` // 34 bytes
	chunked := "22\r\n" + body + "\r\n0\r\n\r\n"
	for _, tc := range []struct {
		name, headers, body string
		status              int
		field, msg          string // of the JSON error body, when status is ours
	}{
		{"one Content-Type", "Content-Type: application/json\r\nContent-Length: 34\r\n", body, 200, "", ""},
		{"two Content-Types", "Content-Type: application/json\r\nContent-Type: text/html\r\nContent-Length: 34\r\n", body, 400, "Content-Type", `2 Content-Type headers (["application/json" "text/html"])`},
		{"two equal Content-Types", "Content-Type: application/json\r\nContent-Type: application/json\r\nContent-Length: 34\r\n", body, 400, "Content-Type", "send exactly one"},
		{"a list in one Content-Type", "Content-Type: application/json, text/html\r\nContent-Length: 34\r\n", body, 400, "Content-Type", "lists several media types"},
		{"a comma inside a parameter is fine", "Content-Type: application/json; x=\"a,b\"\r\nContent-Length: 34\r\n", body, 200, "", ""},
		{"equal Content-Lengths", "Content-Type: application/json\r\nContent-Length: 34\r\nContent-Length: 34\r\n", body, 200, "", ""},
		{"different Content-Lengths", "Content-Type: application/json\r\nContent-Length: 34\r\nContent-Length: 10\r\n", body, 400, "", ""},
		{"chunked", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n", chunked, 200, "", ""},
		{"chunked and a Content-Length: chunked wins", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", chunked, 200, "", ""},
		{"two Transfer-Encodings", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked, 501, "", ""},
		{"gzip, chunked", "Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n", chunked, 501, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second)) // a bound on a hung test, not a timing check
			if _, err := io.WriteString(c, "POST /retrieve HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+tc.headers+"\r\n"+tc.body); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 200 && !strings.Contains(string(b), `"result"`) {
				t.Fatalf("200 without a result: %s", b)
			}
			if tc.field != "" {
				msg, field := errorBody(t, string(b))
				if field != tc.field || !strings.Contains(msg, tc.msg) {
					t.Fatalf("error %q field %q, want field %q and a message containing %q", msg, field, tc.field, tc.msg)
				}
			}
		})
	}
}
