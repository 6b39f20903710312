package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func TestReadRequestsBadLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not json", "{\"code\": \"print(1)\"}\n{oops\n", "line 2"},
		{"unknown field", "\n{\"cod\": \"print(1)\"}\n", "line 2"},
		{"neither code nor response", "{\"id\": \"a\"}\n", "line 1: neither code nor response"},
		{"both code and response", "{\"code\": \"print(1)\"}\n{\"code\": \"print(1)\", \"response\": \"<code>print(2)</code>\"}\n", "line 2: both code and response"},
		{"bad budgets", "{\"code\": \"print(1)\", \"budgets\": {\"max_steps\": -1}}\n", "line 1"},
		{"data after the object", "{\"code\": \"print(1)\"} {\"code\": \"print(2)\"}\n", "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRequests(strings.NewReader(tc.in), "in.jsonl")
			if !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrBadInput naming %q", err, tc.want)
			}
		})
	}
	reqs, err := ReadRequests(strings.NewReader("\n{\"id\": \"a\", \"code\": \"print(1)\"}\n\n{\"response\": \"<code>print(2)</code>\"}\n"), "in")
	if err != nil || len(reqs) != 2 || reqs[0].ID != "a" {
		t.Fatalf("ReadRequests = %+v, %v; want 2 requests, blank lines skipped", reqs, err)
	}
}

// TestRunJSONLMatchesRun: whatever the batch size, RunJSONL writes, line
// for line, what Run returns for each program alone (the oracle).
func TestRunJSONLMatchesRun(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	progs := []string{
		`print(sparse("Robin Hood 2018 film director", k=2))`,
		`print(1 + )`,
		`print(fuse([sparse("Robin Hood", k=3), sparse("director", k=3)])[:2])`,
		`fail("no")`,
		`print(len(sparse("film", k=5)))`,
	}
	var in bytes.Buffer
	var want []string
	for i, p := range progs {
		req := Request{ID: string(rune('a' + i)), Code: p}
		b, _ := json.Marshal(req)
		in.Write(append(b, '\n'))
		res := rt.Run(context.Background(), req, nil)
		res.Stats = Stats{}
		w, _ := json.Marshal(res)
		want = append(want, string(w))
	}
	for _, batch := range []int{0, 1, 2, len(progs), len(progs) + 1} {
		var out bytes.Buffer
		st, err := rt.RunJSONL(context.Background(), bytes.NewReader(in.Bytes()), "in", &out, FileConfig{Batch: batch})
		if err != nil || st.Programs != len(progs) || st.Failed != 2 {
			t.Fatalf("batch %d: stats %+v, err %v; want %d programs, 2 failed", batch, st, err, len(progs))
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(progs) {
			t.Fatalf("batch %d: %d lines, want %d", batch, len(lines), len(progs))
		}
		for i, l := range lines {
			var res Result
			if err := json.Unmarshal([]byte(l), &res); err != nil {
				t.Fatal(err)
			}
			res.Stats = Stats{}
			got, _ := json.Marshal(res)
			if string(got) != want[i] {
				t.Errorf("batch %d line %d:\n got %s\nwant %s", batch, i+1, got, want[i])
			}
		}
	}
	if _, err := rt.RunJSONL(context.Background(), strings.NewReader(""), "in", &bytes.Buffer{}, FileConfig{Batch: -1}); err == nil {
		t.Error("negative Batch accepted")
	}
}
