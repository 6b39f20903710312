package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestBuildRecord(t *testing.T) {
	rt, v, q, p, tr := wikiRollout(t)
	ctx := context.Background()
	pr, err := v.Propose(ctx, tr, nil)
	if err != nil || pr.Status != StatusVerified {
		t.Fatalf("%v %s", err, pr.Status)
	}
	m := pr.Verified[0]
	const reasoning = "<think>Both passages name the agency.</think>\n"

	tests := []struct {
		name         string
		continuation string
		found        bool
		correct      bool
	}{
		{"correct answer supervised", reasoning + "<answer> YG Entertainment </answer>", true, true},
		{"normalised exact match", reasoning + "<answer>yg entertainment.</answer>", true, true},
		{"wrong answer masked", reasoning + "<answer>SM Entertainment</answer>", true, false},
		{"last answer block counts", "<answer>YG Entertainment</answer> no: <answer>JYP</answer>", true, false},
		{"no answer", reasoning + "I cannot tell.", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := v.BuildRecord(ctx, RecordRequest{Trajectory: tr, Program: m.Program, Continuation: tc.continuation}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Found != tc.found || rec.Correct != tc.correct {
				t.Fatalf("found %v correct %v (answer %q), want %v %v", rec.Found, rec.Correct, rec.Answer, tc.found, tc.correct)
			}
			if rec.Text != pr.Contexts[0]+tc.continuation {
				t.Fatalf("record text is not the proposal's context followed by the continuation")
			}
			checkSpans(t, rec)
			kinds := map[string]int{}
			for _, s := range rec.Spans {
				kinds[s.Kind]++
				text := rec.Text[s.ByteStart:s.ByteEnd]
				switch s.Kind {
				case SpanPrompt, SpanObservation, SpanModel:
					if s.Supervised {
						t.Errorf("%s span %q supervised", s.Kind, text)
					}
				case SpanProgram:
					if !s.Supervised || text != "<code>\n"+m.Program.Source()+"</code>" {
						t.Errorf("program span %q supervised %v", text, s.Supervised)
					}
				case SpanContinuation:
					if !s.Supervised {
						t.Errorf("continuation span %q unsupervised", text)
					}
				case SpanAnswer:
					if s.Supervised != tc.correct || strings.TrimSpace(text) != rec.Answer {
						t.Errorf("answer span %q supervised %v, want %v", text, s.Supervised, tc.correct)
					}
				}
			}
			if kinds[SpanProgram] != 1 || kinds[SpanObservation] != 1 || kinds[SpanPrompt] != 1 || (kinds[SpanAnswer] == 1) != tc.found {
				t.Errorf("span kinds %v", kinds)
			}
			for _, g := range q.GoldIDs {
				if strings.Contains(rec.Text, g) {
					t.Errorf("gold id %s in the record text", g)
				}
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		// p itself (the negative control) is not a mutation; width 5 of
		// the qWidth10 question is a mutation that does not verify.
		for _, tc := range []struct {
			name string
			tr   Trajectory
			p    Program
			want error
		}{
			{"the original program", tr, p, ErrNotVerified},
			{"a program outside U(p)", tr, Program{Queries: []string{"other query"}, Mode: ModeSparse, Width: 5, Print: 5}, ErrNotVerified},
			{"an unverified mutation", rollout(t, rt, wikiQuestion(t, qWidth10), bm25Program(wikiQuestion(t, qWidth10), 3, 3), "x"),
				bm25Program(wikiQuestion(t, qWidth10), 5, 5), ErrNotVerified},
			{"not mutable", Trajectory{GoldIDs: q.GoldIDs, Turns: []Turn{{RoleModel, "no code"}}}, m.Program, ErrNotMutable},
			{"no gold", Trajectory{Turns: tr.Turns}, m.Program, ErrBadArgument},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := v.BuildRecord(ctx, RecordRequest{Trajectory: tc.tr, Program: tc.p, Continuation: "<answer>x</answer>"}, nil)
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
			})
		}
	})

	t.Run("earlier turns supervised on request", func(t *testing.T) {
		v2 := newVerifier(t, rt, MutateConfig{SuperviseEarlierTurns: true})
		rec, err := v2.BuildRecord(ctx, RecordRequest{Trajectory: tr, Program: m.Program, Continuation: "<answer>YG Entertainment</answer>"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rec.Spans {
			if s.Kind == SpanModel && !s.Supervised {
				t.Errorf("model span unsupervised with SuperviseEarlierTurns")
			}
		}
	})
}

// checkSpans: spans cover the text in order without gaps or overlaps, and
// character offsets (code points) address the same text as byte offsets.
func checkSpans(t *testing.T, rec Record) {
	t.Helper()
	runes := []rune(rec.Text)
	end, bend := 0, 0
	for _, s := range rec.Spans {
		if s.Start != end || s.ByteStart != bend || s.End <= s.Start {
			t.Fatalf("span %+v does not follow the previous one (end %d, byte end %d)", s, end, bend)
		}
		if string(runes[s.Start:s.End]) != rec.Text[s.ByteStart:s.ByteEnd] {
			t.Fatalf("span %+v: character and byte offsets disagree", s)
		}
		end, bend = s.End, s.ByteEnd
	}
	if end != len(runes) || bend != len(rec.Text) {
		t.Fatalf("spans end at %d/%d, text has %d characters, %d bytes", end, bend, len(runes), len(rec.Text))
	}
	if len(runes) == len(rec.Text) {
		t.Fatalf("test text should hold non-ASCII characters so that offsets differ")
	}
}
