package reward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// OpenAI judge defaults (chosen here).
const (
	DefaultJudgeTimeout    = 60 * time.Second // per attempt
	DefaultJudgeRetries    = 4                // retries after the first attempt
	DefaultJudgeBackoff    = 500 * time.Millisecond
	DefaultJudgeMaxBackoff = 30 * time.Second
	DefaultJudgeMaxTokens  = 512
	// judgePromptVersion is part of the judge's Name, hence of cache keys:
	// change it whenever the prompts change.
	judgePromptVersion = "p1"
)

// OpenAIConfig configures an OpenAI-compatible chat-completions judge
// (OpenAI, vLLM, SGLang, llama.cpp servers).
type OpenAIConfig struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions"
	// (for example "http://127.0.0.1:8000/v1"). Required.
	BaseURL string
	// Model is the "model" field. Required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Timeout bounds one attempt; 0 = DefaultJudgeTimeout.
	Timeout time.Duration
	// MaxRetries is the number of retries after a failed attempt (network
	// error, HTTP 408, 429 or 5xx, or a reply that is not a valid
	// judgement); 0 = DefaultJudgeRetries, rlsearch.Off (negative) = none. Other 4xx
	// statuses fail at once.
	MaxRetries int
	// Backoff is the first wait between attempts, doubled after each and
	// capped at MaxBackoff; a Retry-After header (seconds) lengthens a wait.
	// 0 = DefaultJudgeBackoff / DefaultJudgeMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxTokens is the reply budget ("max_tokens"); 0 = DefaultJudgeMaxTokens.
	MaxTokens int
	// HTTPClient sends the requests; nil = a client without timeout of its
	// own (Timeout applies per attempt).
	HTTPClient *http.Client
}

// Validate reports the first invalid field, naming it.
func (c *OpenAIConfig) Validate() error {
	switch {
	case c.BaseURL == "":
		return errors.New("reward: OpenAIConfig.BaseURL is empty")
	case !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://"):
		return fmt.Errorf("reward: OpenAIConfig.BaseURL %q is not an http(s) URL", c.BaseURL)
	case c.Model == "":
		return errors.New("reward: OpenAIConfig.Model is empty")
	case c.Timeout < 0:
		return fmt.Errorf("reward: OpenAIConfig.Timeout %v is negative", c.Timeout)
	case c.Backoff < 0:
		return fmt.Errorf("reward: OpenAIConfig.Backoff %v is negative", c.Backoff)
	case c.MaxBackoff < 0:
		return fmt.Errorf("reward: OpenAIConfig.MaxBackoff %v is negative", c.MaxBackoff)
	case c.MaxTokens < 0:
		return fmt.Errorf("reward: OpenAIConfig.MaxTokens %d is negative", c.MaxTokens)
	}
	return nil
}

// OpenAIJudge asks a chat-completions endpoint for judgements with
// temperature 0 and a JSON reply (prompts in judgePrompt). Wrap it in a
// CachedJudge so that reruns cost nothing. Safe for concurrent use.
type OpenAIJudge struct {
	cfg  OpenAIConfig
	url  string
	http *http.Client
}

// NewOpenAIJudge validates cfg and applies its defaults. It makes no
// request.
func NewOpenAIJudge(cfg OpenAIConfig) (*OpenAIJudge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultJudgeTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultJudgeRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultJudgeBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultJudgeMaxBackoff
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultJudgeMaxTokens
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &OpenAIJudge{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", http: hc}, nil
}

// Name returns "openai:<model>:<prompt version>".
func (o *OpenAIJudge) Name() string { return "openai:" + o.cfg.Model + ":" + judgePromptVersion }

const judgeSystem = "You are a strict evaluator of search-agent trajectories for question answering. " +
	"Reply with one JSON object and nothing else."

// judgePrompt returns the user message for req (paper 001, App. D.3 asks
// an evaluator for step coverage, plan quality and outcome quality; the
// paper's exact prompt is not available here, these are written for it).
func judgePrompt(req JudgeRequest) (string, error) {
	var b strings.Builder
	switch req.Kind {
	case JudgeCoverage:
		b.WriteString("Decide, for each numbered STEP, whether the agent's trajectory carries it out (order does not matter; a step is carried out when some search or reasoning of the agent does what the step asks).\n\n")
		fmt.Fprintf(&b, "QUESTION: %s\n\nSTEPS:\n", req.Question)
		for i, s := range req.Steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
		b.WriteString("\nAGENT SEARCH QUERIES:\n")
		for _, a := range req.Actions {
			fmt.Fprintf(&b, "- %s\n", a)
		}
		if req.Trajectory != "" {
			fmt.Fprintf(&b, "\nAGENT TRAJECTORY:\n%s\n", req.Trajectory)
		}
		fmt.Fprintf(&b, "\nReply {\"covered\": [true|false, ...]} with exactly %d booleans, one per step in order.", len(req.Steps))
	case JudgePlan:
		b.WriteString("Rate the agent's search plan for answering the question: are the steps necessary, sufficient, non-redundant and specific?\n\n")
		fmt.Fprintf(&b, "QUESTION: %s\n\nPLAN:\n", req.Question)
		for i, s := range req.Steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
		b.WriteString("\nReply {\"score\": x} with x between 0 (useless) and 1 (ideal).")
	case JudgeReasoning:
		b.WriteString("The agent's final answer does not match the reference answer. Rate how sound and useful its reasoning path was: did it find the right evidence and make correct intermediate inferences?\n\n")
		fmt.Fprintf(&b, "QUESTION: %s\nREFERENCE ANSWERS: %s\nAGENT ANSWER: %s\n\nAGENT TRAJECTORY:\n%s\n",
			req.Question, strings.Join(req.Golds, " | "), req.Answer, req.Trajectory)
		b.WriteString("\nReply {\"score\": x} with x between 0 (no useful progress) and 1 (sound reasoning, only the final answer is off).")
	default:
		return "", fmt.Errorf("%w: unknown judgement kind %q", ErrJudge, req.Kind)
	}
	return b.String(), nil
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
}

// errRetry marks a failure worth another attempt.
type errRetry struct {
	err   error
	after time.Duration // Retry-After, 0 if none
}

func (e *errRetry) Error() string { return e.err.Error() }
func (e *errRetry) Unwrap() error { return e.err }

// Judge implements Judge. Errors wrap ErrJudge, except a cancelled ctx,
// which is returned as ctx.Err().
func (o *OpenAIJudge) Judge(ctx context.Context, req JudgeRequest) (Judgement, error) {
	prompt, err := judgePrompt(req)
	if err != nil {
		return Judgement{}, err
	}
	body, err := json.Marshal(chatRequest{Model: o.cfg.Model, Temperature: 0, MaxTokens: o.cfg.MaxTokens,
		Messages: []chatMessage{{Role: "system", Content: judgeSystem}, {Role: "user", Content: prompt}}})
	if err != nil {
		return Judgement{}, fmt.Errorf("%w: %v", ErrJudge, err)
	}
	wait := o.cfg.Backoff
	var last error
	for attempt := 0; attempt <= o.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			d := wait
			var re *errRetry
			if errors.As(last, &re) && re.after > d {
				d = min(re.after, o.cfg.MaxBackoff)
			}
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return Judgement{}, ctx.Err()
			case <-t.C:
			}
			wait = min(2*wait, o.cfg.MaxBackoff)
		}
		j, err := o.attempt(ctx, body, req)
		if err == nil {
			return j, nil
		}
		if ctx.Err() != nil {
			return Judgement{}, ctx.Err()
		}
		last = err
		var re *errRetry
		if !errors.As(err, &re) {
			break
		}
	}
	return Judgement{}, fmt.Errorf("%w: %s: %v", ErrJudge, o.url, last)
}

func (o *OpenAIJudge) attempt(ctx context.Context, body []byte, req JudgeRequest) (Judgement, error) {
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return Judgement{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.http.Do(hr)
	if err != nil {
		return Judgement{}, &errRetry{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Judgement{}, &errRetry{err: err}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
		if resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			var after time.Duration
			if s, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && s > 0 {
				after = time.Duration(s) * time.Second
			}
			return Judgement{}, &errRetry{err: err, after: after}
		}
		return Judgement{}, err
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil || len(cr.Choices) == 0 {
		return Judgement{}, &errRetry{err: fmt.Errorf("reply is not a chat completion: %.200s", raw)}
	}
	j, err := ParseJudgement(req, cr.Choices[0].Message.Content)
	if err != nil {
		return Judgement{}, &errRetry{err: err}
	}
	return j, nil
}

// ParseJudgement reads a judge model's reply for req: the first JSON
// object in content (code fences and surrounding prose are tolerated),
// {"covered": [bool]} with len(req.Steps) entries for JudgeCoverage, else
// {"score": number in [0,1]}. Errors wrap ErrJudge.
func ParseJudgement(req JudgeRequest, content string) (Judgement, error) {
	i, k := strings.IndexByte(content, '{'), strings.LastIndexByte(content, '}')
	if i < 0 || k < i {
		return Judgement{}, fmt.Errorf("%w: no JSON object in reply %.200q", ErrJudge, content)
	}
	var v struct {
		Covered []bool   `json:"covered"`
		Score   *float64 `json:"score"`
	}
	if err := json.Unmarshal([]byte(content[i:k+1]), &v); err != nil {
		return Judgement{}, fmt.Errorf("%w: reply %.200q: %v", ErrJudge, content, err)
	}
	switch req.Kind {
	case JudgeCoverage:
		if len(v.Covered) != len(req.Steps) {
			return Judgement{}, fmt.Errorf("%w: reply has %d coverage flags for %d steps", ErrJudge, len(v.Covered), len(req.Steps))
		}
		j := Judgement{Covered: v.Covered}
		if len(req.Steps) > 0 {
			j.Score = float64(countTrue(v.Covered)) / float64(len(req.Steps))
		}
		return j, nil
	default:
		if v.Score == nil || math.IsNaN(*v.Score) || *v.Score < 0 || *v.Score > 1 {
			return Judgement{}, fmt.Errorf("%w: reply %.200q has no score in [0,1]", ErrJudge, content)
		}
		return Judgement{Score: *v.Score}, nil
	}
}
