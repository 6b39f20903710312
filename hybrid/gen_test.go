package hybrid

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func scoreProgram(ctx context.Context, c *Collection, in Instance, p Program) Scores {
	res, err := c.Execute(ctx, p)
	if err != nil {
		return Score(in.Truth, nil, false)
	}
	return Score(in.Truth, res.IDs, true)
}

// TestGenerateGoldAndMutation: on both shipped collections, instances at
// each level; the gold program scores Hit@1 = 1 on every instance (its
// result is T itself, so there are no ties to document beyond T's
// internal order), and negating one leaf scores lower.
func TestGenerateGoldAndMutation(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"amazon_toys", "enron_emails"} {
		c := shipped(t, name)
		for _, level := range []string{L1, L2, L3} {
			t.Run(name+"/"+level, func(t *testing.T) {
				insts, st, err := Generate(ctx, c, GenConfig{N: 12, Seed: 3, Level: level})
				if err != nil {
					t.Fatal(err)
				}
				if len(insts) < 8 {
					t.Fatalf("only %d instances (stats %+v)", len(insts), st)
				}
				var gold, mut []Scores
				for _, in := range insts {
					if in.Level != level || len(in.Truth) == 0 || len(in.Truth) > DefaultK {
						t.Fatalf("bad instance %+v", in)
					}
					wantN := map[string][2]int{L1: {1, 1}, L2: {2, 3}, L3: {4, 5}}[level]
					if in.NumLeaves < wantN[0] || in.NumLeaves > wantN[1] || len(in.Leaves) != in.NumLeaves {
						t.Fatalf("%s instance with %d leaves", level, in.NumLeaves)
					}
					for _, g := range in.Gold {
						if !contains(in.Truth, g) {
							t.Fatalf("gold %s not in T: %+v", g, in)
						}
					}
					// Round trip through JSON, as the CLI stores it.
					raw, _ := json.Marshal(in)
					var back Instance
					if err := json.Unmarshal(raw, &back); err != nil {
						t.Fatal(err)
					}
					s := scoreProgram(ctx, c, back, back.Program)
					if s.Hit1 != 1 || s.NDCG3 != 1 || s.RR != 1 {
						t.Fatalf("gold program scores %+v on its own instance %s", s, back.Program.SQL)
					}
					gold = append(gold, s)
					mp, err := NegateLeaf(c.Schema(), back.Program, 0)
					if err != nil {
						t.Fatal(err)
					}
					if mp.SQL == back.Program.SQL {
						t.Fatalf("mutation did not change %s", mp.SQL)
					}
					mut = append(mut, scoreProgram(ctx, c, back, mp))
				}
				g, m := Evaluate(insts, gold), Evaluate(insts, mut)
				if g.All.Hit1 != 1 || g.All.ExecSuccess != 1 {
					t.Fatalf("gold metrics %+v", g.All)
				}
				if m.All.Hit1 >= g.All.Hit1 || m.All.NDCG3 >= g.All.NDCG3 {
					t.Fatalf("mutated program does not score lower: %+v vs %+v", m.All, g.All)
				}
				t.Logf("%d instances, stats %+v; mutated Hit@1 %.3f MRR %.3f", len(insts), st, m.All.Hit1, m.All.MRR)
			})
		}
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func TestGenerateDeterministicMix(t *testing.T) {
	ctx := context.Background()
	c := shipped(t, "enron_emails")
	a, _, err := Generate(ctx, c, GenConfig{N: 20, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := Generate(ctx, c, GenConfig{N: 20, Seed: 11})
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	if string(ra) != string(rb) {
		t.Fatal("same seed gave different instances")
	}
	levels := map[string]int{}
	for _, in := range a {
		levels[in.Level]++
	}
	if len(levels) < 2 {
		t.Fatalf("mixed generation produced levels %v", levels)
	}
}

func TestScore(t *testing.T) {
	l := 1 / math.Log2(3)
	cases := []struct {
		name   string
		truth  []string
		ranked []string
		ok     bool
		want   Scores
	}{
		{"failed execution", []string{"a"}, []string{"a"}, false, Scores{}},
		{"empty result", []string{"a"}, nil, true, Scores{Executed: true}},
		{"top hit", []string{"a"}, []string{"a", "b"}, true, Scores{true, 1, 1, 1, 1}},
		{"second", []string{"a", "c"}, []string{"b", "a", "c"}, true, Scores{true, 0, 1, 0.5, (l + 0.5) / (1 + l)}},
		{"fourth", []string{"a"}, []string{"b", "c", "d", "a"}, true, Scores{true, 0, 0, 0.25, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.truth, tc.ranked, tc.ok)
			if math.Abs(got.NDCG3-tc.want.NDCG3) > 1e-12 || got.Hit1 != tc.want.Hit1 || got.Hit3 != tc.want.Hit3 || got.RR != tc.want.RR || got.Executed != tc.want.Executed {
				t.Fatalf("Score = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVerbalizers(t *testing.T) {
	ctx := context.Background()
	s := amazonSchema(t)
	in := &Instance{Program: Program{SQL: "WHERE brand = 'Lego' AND product_id NOT IN <text_0>", RetrievalList: []Retrieval{txt("title", "star wars")}}}
	got, err := TemplateVerbalizer{}.Verbalize(ctx, s, in)
	if err != nil || got != `amazon_toys where brand = 'Lego' and not title about "star wars"` {
		t.Fatalf("template: %q %v", got, err)
	}
	var seen map[string]any
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad", 400)
			return
		}
		json.NewDecoder(r.Body).Decode(&seen)
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"  Lego sets that are not Star Wars  "}}]}`))
	}))
	defer fake.Close()
	v := &OpenAIVerbalizer{BaseURL: fake.URL + "/v1", Model: "m", APIKey: "k"}
	got, err = v.Verbalize(ctx, s, in)
	if err != nil || got != "Lego sets that are not Star Wars" {
		t.Fatalf("openai: %q %v", got, err)
	}
	msgs := seen["messages"].([]any)
	if seen["model"] != "m" || !strings.Contains(msgs[1].(map[string]any)["content"].(string), "NOT IN <text_0>") {
		t.Fatalf("request %v", seen)
	}
	bad := &OpenAIVerbalizer{BaseURL: fake.URL + "/v1", Model: "m"}
	if _, err := bad.Verbalize(ctx, s, in); err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Fatalf("want status error, got %v", err)
	}
}
