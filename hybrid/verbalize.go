package hybrid

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
)

// Verbalizer rewrites a gold program as a natural-language query (§3.2
// step iv). Implementations are safe for concurrent use.
type Verbalizer interface {
	Verbalize(ctx context.Context, s *Schema, inst *Instance) (string, error)
}

// OpenAIVerbalizer asks an OpenAI-compatible chat-completions endpoint
// (POST {BaseURL}/chat/completions) to rewrite the gold DSL, as the paper
// does with GPT-4o. Safe for concurrent use.
type OpenAIVerbalizer struct {
	// BaseURL such as "http://127.0.0.1:8001/v1" (required).
	BaseURL string
	// Model name sent in the request (required).
	Model string
	// APIKey is sent as a bearer token when non-empty.
	APIKey string
	// Client is the HTTP client (nil = a client with a 60 s timeout).
	Client *http.Client
	// Temperature of the request (0 = deterministic).
	Temperature float64
}

// ErrLLM wraps failures of the chat endpoint.
var ErrLLM = errors.New("hybrid: llm request failed")

// VerbalizePrompt is the system prompt of OpenAIVerbalizer.
const VerbalizePrompt = `You rewrite a database query program as ONE fluent natural-language search request a user would type.
The program has a SQL WHERE clause over structured columns and placeholders <text_i>/<image_i> standing for semantic searches
listed in retrieval_list (the i-th text entry is <text_i>). "id IN <text_i>" means "about <query>", "id NOT IN <text_i>" means
"not about <query>". Keep every condition, its values and its logic (AND, OR, NOT, grouping). Output only the request.`

// Verbalize implements Verbalizer.
func (v *OpenAIVerbalizer) Verbalize(ctx context.Context, s *Schema, inst *Instance) (string, error) {
	if v.BaseURL == "" || v.Model == "" {
		return "", errors.New("hybrid: OpenAIVerbalizer.BaseURL and Model are required")
	}
	var pb bytes.Buffer
	enc := json.NewEncoder(&pb)
	enc.SetEscapeHTML(false) // keep <text_0> readable for the model
	enc.Encode(inst.Program)
	prog := bytes.TrimSpace(pb.Bytes())
	var cols []string
	for _, c := range s.Columns {
		cols = append(cols, fmt.Sprintf("%s %s -- %s", c.Name, c.Type, c.Description))
	}
	user := fmt.Sprintf("Collection: %s\nColumns:\n%s\nProgram:\n%s", s.Description, strings.Join(cols, "\n"), prog)
	body, _ := json.Marshal(map[string]any{
		"model":       v.Model,
		"temperature": v.Temperature,
		"messages": []map[string]string{
			{"role": "system", "content": VerbalizePrompt},
			{"role": "user", "content": user},
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(v.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrLLM, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if v.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+v.APIKey)
	}
	cl := v.Client
	if cl == nil {
		cl = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := cl.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrLLM, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrLLM, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: status %d: %s", ErrLLM, resp.StatusCode, truncate(string(raw), 200))
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("%w: bad response: %v", ErrLLM, err)
	}
	if len(out.Choices) == 0 || strings.TrimSpace(out.Choices[0].Message.Content) == "" {
		return "", fmt.Errorf("%w: empty response", ErrLLM)
	}
	return strings.TrimSpace(out.Choices[0].Message.Content), nil
}

// TemplateVerbalizer is a deterministic, model-free rewrite (one clause per
// leaf, in program order); it keeps the pipeline usable without an LLM.
type TemplateVerbalizer struct{}

// Verbalize implements Verbalizer: "<collection> where <pred> and/or ...",
// with placeholders replaced by `<field> about "<query>"`.
func (TemplateVerbalizer) Verbalize(_ context.Context, s *Schema, inst *Instance) (string, error) {
	cp, err := Compile(s, inst.Program, Limits{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(s.Name + " where ")
	var walk func(e Expr, top bool)
	walk = func(e Expr, top bool) {
		switch x := e.(type) {
		case *Logic:
			if !top {
				b.WriteString("(")
			}
			for i, a := range x.Args {
				if i > 0 {
					b.WriteString(" " + strings.ToLower(x.Op) + " ")
				}
				walk(a, false)
			}
			if !top {
				b.WriteString(")")
			}
		case *Not:
			b.WriteString("not ")
			walk(x.X, false)
		case *InSet:
			for i, s := range cp.Slot {
				if s == x {
					r := cp.Program.RetrievalList[i]
					if x.Negate {
						b.WriteString("not ")
					}
					fmt.Fprintf(&b, "%s about %q", r.Field, r.Query)
				}
			}
		default:
			b.WriteString(Format(e))
		}
	}
	walk(cp.Expr, true)
	return b.String(), nil
}

// ErrVerbalizer: an unknown verbalizer kind or an incomplete OpenAI
// configuration.
var ErrVerbalizer = errors.New("hybrid: bad verbalizer")

// NewVerbalizer returns the verbalizer of step (iv) by kind: "none" (nil:
// instances keep no natural-language query), "template"
// (TemplateVerbalizer), or "openai" (openai, which needs BaseURL and
// Model). Errors wrap ErrVerbalizer.
func NewVerbalizer(kind string, openai OpenAIVerbalizer) (Verbalizer, error) {
	switch kind {
	case "none":
		return nil, nil
	case "template":
		return TemplateVerbalizer{}, nil
	case "openai":
		if openai.BaseURL == "" || openai.Model == "" {
			return nil, fmt.Errorf("%w: --verbalize openai needs --llm-url and --llm-model", ErrVerbalizer)
		}
		return &openai, nil
	}
	return nil, fmt.Errorf("%w: --verbalize %q: want none, template or openai", ErrVerbalizer, kind)
}
