package reward

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type blockingJudge struct{}

func (blockingJudge) Name() string { return "blocking" }
func (blockingJudge) Judge(ctx context.Context, _ JudgeRequest) (Judgement, error) {
	<-ctx.Done()
	return Judgement{}, ctx.Err()
}

type failingJudge struct{}

func (failingJudge) Name() string { return "failing" }
func (failingJudge) Judge(context.Context, JudgeRequest) (Judgement, error) {
	return Judgement{}, ErrJudge
}

func p1Batch(n int) []json.RawMessage {
	var out []json.RawMessage
	for i := range n {
		b, _ := json.Marshal(SearchP1Rollout{ID: string(rune('a' + i)), GoldenAnswers: []string{"2009"}, Response: informantResponse("2010")})
		out = append(out, b)
	}
	return out
}

func TestScoreBatchCancel(t *testing.T) {
	s, _ := New(Config{SearchP1: SearchP1Config{Judge: blockingJudge{}}, Workers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := s.ScoreBatch(ctx, KindSearchP1, p1Batch(10))
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("ScoreBatch = %v, %v; want no results and the context's error", res, err)
	}
}

func TestScoreBatchJudgeFailureStaysInRollout(t *testing.T) {
	s, _ := New(Config{SearchP1: SearchP1Config{Judge: failingJudge{}}})
	res, err := s.ScoreBatch(context.Background(), KindSearchP1, p1Batch(3))
	if err != nil || len(res) != 3 {
		t.Fatalf("ScoreBatch: %v, %d results", err, len(res))
	}
	for i, r := range res {
		p := r.(SearchP1Result)
		if p.Error == "" || p.Total != 0 || p.ID != string(rune('a'+i)) {
			t.Errorf("result %d = %+v, want the judge error, zero scores and the id in order", i, p)
		}
	}
}

// TestScoreBatchOrder: results come back in input order whatever the
// number of workers, and equal the one-at-a-time scores.
func TestScoreBatchOrder(t *testing.T) {
	var batch []json.RawMessage
	for i, ans := range []string{"2009", "2010", "nothing", "September 2009", "the year 2009", "1999", "x", "2009!"} {
		b, _ := json.Marshal(SearchP1Rollout{ID: string(rune('a' + i)), GoldenAnswers: []string{"2009"}, Response: informantResponse(ans), ReferencePlan: informantRef})
		batch = append(batch, b)
	}
	one, _ := New(Config{Workers: 1})
	many, _ := New(Config{Workers: 5})
	a, err1 := one.ScoreBatch(context.Background(), KindSearchP1, batch)
	b, err2 := many.ScoreBatch(context.Background(), KindSearchP1, batch)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("1 worker and 5 workers differ:\n%s\n%s", ja, jb)
	}
	for i, r := range a {
		if r.(SearchP1Result).ID != string(rune('a'+i)) {
			t.Errorf("result %d has id %s", i, r.(SearchP1Result).ID)
		}
	}
}
