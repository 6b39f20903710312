package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseListen(t *testing.T) {
	for _, tc := range []struct {
		in, addr string
		p        Profile
		corpus   string
		bad      bool
	}{
		{in: "127.0.0.1:8001=browsecomp", addr: "127.0.0.1:8001", p: ProfileBrowseComp},
		{in: "0.0.0.0:8002=asearcher@wiki", addr: "0.0.0.0:8002", p: ProfileASearcher, corpus: "wiki"},
		{in: ":8003@musique", addr: ":8003", p: ProfileSearchR1, corpus: "musique"},
		{in: "[::1]:8004", addr: "[::1]:8004", p: ProfileSearchR1},
		{in: "127.0.0.1:8005=searchr1", addr: "127.0.0.1:8005", p: ProfileSearchR1},
		{in: "127.0.0.1=browsecomp", bad: true},
		{in: "127.0.0.1:8001=skyrl", bad: true},
	} {
		addr, p, corpus, err := ParseListen(tc.in)
		if (err != nil) != tc.bad || !tc.bad && (addr != tc.addr || p != tc.p || corpus != tc.corpus) {
			t.Errorf("ParseListen(%q) = %q %q %q %v", tc.in, addr, p, corpus, err)
		}
	}
}

// TestServeListeners: one process, two listeners with different profiles
// over the same corpus: the same {"query"} gets SkyRL's nested reply on
// one and BrowseComp-Plus's flat one on the other; cancelling stops both.
func TestServeListeners(t *testing.T) {
	s := dialectServer(t, nil)
	c, err := NewCorpora([]string{"wiki"}, []*Server{s})
	if err != nil {
		t.Fatal(err)
	}
	var ls []Listener
	for _, p := range []Profile{ProfileSearchR1, ProfileBrowseComp} {
		h, err := c.Handler(p, "")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, Listener{Addr: "127.0.0.1:0", Handler: h, Desc: string(p)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- s.ServeListeners(ctx, ls, func(l Listener, a net.Addr) { addrs <- l.Desc + " " + a.String() })
	}()
	got := map[string]string{}
	for range 2 {
		desc, a, _ := strings.Cut(<-addrs, " ")
		resp, err := http.Post("http://"+a+"/retrieve", "application/json", strings.NewReader(`{"query":"paris"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got[desc] = string(b)
	}
	if !strings.HasPrefix(got["searchr1"], `{"result":[[{"id":"0"`) || !strings.HasPrefix(got["browsecomp"], `{"result":[{"document":{"title":"Paris"`) {
		t.Errorf("replies %v", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeListeners: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListeners did not stop")
	}
	if _, err := c.Handler(ProfileSearchR1, "nope"); err == nil {
		t.Error("unknown corpus accepted")
	}
	if _, err := NewCorpora([]string{"a/b"}, []*Server{s}); err == nil {
		t.Error("a name with a slash accepted")
	}
}
