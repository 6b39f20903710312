package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Listener is one address a process serves, with its handler (a profile
// of a corpus: Corpora.Handler).
type Listener struct {
	Addr    string
	Handler http.Handler
	// Desc names it in logs and errors ("127.0.0.1:8001=browsecomp").
	Desc string
}

// ParseListen parses serve's --listen value ADDR[=PROFILE][@CORPUS]:
// "127.0.0.1:8001=browsecomp", "0.0.0.0:8002=asearcher@wiki",
// ":8003@musique" (the default profile over corpus musique).
func ParseListen(v string) (addr string, p Profile, corpus string, err error) {
	addr, rest, _ := strings.Cut(v, "=")
	if before, after, ok := strings.Cut(addr, "@"); ok {
		addr, corpus = before, after // ADDR@CORPUS without a profile
	} else if before, after, ok := strings.Cut(rest, "@"); ok {
		rest, corpus = before, after
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", "", "", fmt.Errorf("--listen %q: address %q: %v (want HOST:PORT[=PROFILE][@CORPUS])", v, addr, err)
	}
	if p, err = ParseProfile(rest); err != nil {
		return "", "", "", fmt.Errorf("--listen %q: %w", v, err)
	}
	return addr, p, corpus, nil
}

// ServeListeners serves every listener until ctx is cancelled, each as
// ListenAndServe serves one (read timeout, graceful shutdown with
// Config.ShutdownTimeout); ready, when non-nil, is called with each
// bound address. If one fails (an address in use), the others are shut
// down and its error returned; after a cancellation the shutdown errors
// are joined.
func (s *Server) ServeListeners(ctx context.Context, ls []Listener, ready func(Listener, net.Addr)) error {
	if len(ls) == 0 {
		return errors.New("server: no listener")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		c := *s // the same server, serving l.Handler on l.Addr
		c.handler = l.Handler
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r func(net.Addr)
			if ready != nil {
				r = func(a net.Addr) { ready(l, a) }
			}
			if err := c.ListenAndServe(ctx, l.Addr, r); err != nil {
				errs[i] = fmt.Errorf("%s: %w", l.Desc, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
