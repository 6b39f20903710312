package reward

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLLM is an httptest chat-completions server. reply decides each
// answer from the request number (1-based) and the user prompt.
type fakeLLM struct {
	srv   *httptest.Server
	calls atomic.Int32
}

func newFakeLLM(t *testing.T, reply func(n int, prompt string, w http.ResponseWriter)) *fakeLLM {
	f := &fakeLLM{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.calls.Add(1))
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "bad path", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" || len(req.Messages) != 2 || req.Temperature != 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		reply(n, req.Messages[1].Content, w)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func chatReply(w http.ResponseWriter, content string) {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": content}}}})
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func newTestJudge(t *testing.T, url string, mut func(*OpenAIConfig)) *OpenAIJudge {
	cfg := OpenAIConfig{BaseURL: url + "/v1/", Model: "m", APIKey: "k", Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Timeout: 2 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	j, err := NewOpenAIJudge(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestOpenAIJudgeReplies(t *testing.T) {
	f := newFakeLLM(t, func(n int, prompt string, w http.ResponseWriter) {
		switch {
		case strings.Contains(prompt, "STEP"):
			chatReply(w, "```json\n{\"covered\": [true, false]}\n```")
		default:
			chatReply(w, `Sure. {"score": 0.75}`)
		}
	})
	j := newTestJudge(t, f.srv.URL, nil)
	ctx := context.Background()
	c, err := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage, Steps: []string{"a", "b"}, Actions: []string{"q"}})
	if err != nil || len(c.Covered) != 2 || !c.Covered[0] || c.Covered[1] || !near(c.Score, 0.5) {
		t.Fatalf("coverage %+v %v, want [true false] 0.5", c, err)
	}
	p, err := j.Judge(ctx, JudgeRequest{Kind: JudgePlan, Steps: []string{"a"}})
	if err != nil || !near(p.Score, 0.75) {
		t.Fatalf("plan %+v %v, want 0.75", p, err)
	}
}

func TestOpenAIJudgeRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     func(n int, w http.ResponseWriter)
		wantErr   bool
		wantCalls int32
	}{
		{"500 then ok", func(n int, w http.ResponseWriter) {
			if n < 3 {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			chatReply(w, `{"score": 1}`)
		}, false, 3},
		{"429 with Retry-After capped by MaxBackoff", func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "100")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			chatReply(w, `{"score": 1}`)
		}, false, 2},
		{"bad reply then ok", func(n int, w http.ResponseWriter) {
			if n == 1 {
				chatReply(w, `{"score": 7}`)
				return
			}
			chatReply(w, `{"score": 0.5}`)
		}, false, 2},
		{"400 is not retried", func(n int, w http.ResponseWriter) { http.Error(w, "bad", http.StatusBadRequest) }, true, 1},
		{"always 500: 1 + 2 retries", func(n int, w http.ResponseWriter) { http.Error(w, "down", 500) }, true, 3},
		{"slow server times out each attempt", func(n int, w http.ResponseWriter) { time.Sleep(300 * time.Millisecond); chatReply(w, `{"score": 1}`) }, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLLM(t, func(n int, _ string, w http.ResponseWriter) { tc.reply(n, w) })
			j := newTestJudge(t, f.srv.URL, func(c *OpenAIConfig) { c.MaxRetries = 2; c.Timeout = 100 * time.Millisecond })
			start := time.Now()
			_, err := j.Judge(context.Background(), JudgeRequest{Kind: JudgePlan, Steps: []string{"a"}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrJudge) {
				t.Errorf("err %v does not wrap ErrJudge", err)
			}
			if got := f.calls.Load(); got != tc.wantCalls {
				t.Errorf("%d requests, want %d", got, tc.wantCalls)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v: Retry-After not capped", time.Since(start))
			}
		})
	}
}

func TestOpenAIJudgeCancel(t *testing.T) {
	f := newFakeLLM(t, func(n int, _ string, w http.ResponseWriter) { http.Error(w, "down", 500) })
	j := newTestJudge(t, f.srv.URL, func(c *OpenAIConfig) { c.Backoff = time.Hour; c.MaxBackoff = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := j.Judge(ctx, JudgeRequest{Kind: JudgePlan}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's error while backing off", err)
	}
}

func TestOpenAIConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   OpenAIConfig
		field string
	}{
		{OpenAIConfig{Model: "m"}, "BaseURL"},
		{OpenAIConfig{BaseURL: "ftp://x", Model: "m"}, "BaseURL"},
		{OpenAIConfig{BaseURL: "http://x"}, "Model"},
		{OpenAIConfig{BaseURL: "http://x", Model: "m", Timeout: -1}, "Timeout"},
		{OpenAIConfig{BaseURL: "http://x", Model: "m", MaxTokens: -1}, "MaxTokens"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

// TestCachedJudgeRerunIsFree scores a batch through the OpenAI judge with a
// cache file, then scores it again with a fresh judge and cache loaded from
// that file: the rerun makes no request and gives identical results.
func TestCachedJudgeRerunIsFree(t *testing.T) {
	f := newFakeLLM(t, func(n int, prompt string, w http.ResponseWriter) {
		if strings.Contains(prompt, "STEPS:") {
			steps := strings.Count(strings.SplitN(strings.SplitN(prompt, "STEPS:\n", 2)[1], "\n\n", 2)[0], "\n") + 1
			cov := make([]bool, steps)
			cov[0] = true
			b, _ := json.Marshal(map[string]any{"covered": cov})
			chatReply(w, string(b))
			return
		}
		chatReply(w, `{"score": 0.6}`)
	})
	path := filepath.Join(t.TempDir(), "judge-cache.json")
	rollouts := []json.RawMessage{}
	for _, ans := range []string{"2009", "2010", "1999"} {
		b, _ := json.Marshal(SearchP1Rollout{ID: ans, Question: "q", GoldenAnswers: []string{"2009"}, Response: informantResponse(ans), ReferencePlan: informantRef})
		rollouts = append(rollouts, b)
	}
	run := func() ([]any, *JudgeCache) {
		cache, err := OpenJudgeCache(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{SearchP1: SearchP1Config{Judge: CachedJudge{Inner: newTestJudge(t, f.srv.URL, nil), Cache: cache}}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.ScoreBatch(context.Background(), KindSearchP1, rollouts)
		if err != nil {
			t.Fatal(err)
		}
		if err := cache.Save(); err != nil {
			t.Fatal(err)
		}
		return res, cache
	}
	first, c1 := run()
	calls := f.calls.Load()
	if calls == 0 || c1.Len() == 0 {
		t.Fatalf("first run made %d requests and cached %d judgements", calls, c1.Len())
	}
	for _, r := range first {
		if e := r.(SearchP1Result).Error; e != "" {
			t.Fatalf("judge error: %s", e)
		}
	}
	second, c2 := run()
	if got := f.calls.Load(); got != calls {
		t.Errorf("rerun made %d more requests, want 0", got-calls)
	}
	if h, m := c2.Stats(); m != 0 || h == 0 {
		t.Errorf("rerun cache hits %d misses %d, want all hits", h, m)
	}
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(second)
	if string(a) != string(b) {
		t.Errorf("rerun results differ:\n%s\n%s", a, b)
	}
	// No temporary file is left beside the cache.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("cache directory holds %d entries, want only the cache file", len(ents))
	}
	// A corrupt cache file is refused, not silently dropped.
	os.WriteFile(path, []byte("{"), 0o644)
	if _, err := OpenJudgeCache(path); err == nil {
		t.Error("corrupt cache file opened")
	}
}
