package router

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/transcript"
)

// TestMergeTranscript runs testdata/merge.txt, the fan-out's merge and
// its OnMissingShard policy without HTTP (onMissing, then merge, as
// RetrieveDocs calls them): `merge k=N policy=fail|partial [canceled]`
// reads one input line per shard, in shard order:
//
//	I: ROW:SCORE ROW:SCORE | ROW:SCORE    shard I's answer, one list per query, split by '|'
//	I: down REASON                        no answer (a *ShardError with REASON)
//	I: 4xx MESSAGE                        the shard's 4xx (a *clientError, as callShard wraps it)
//	I: gone                               the caller's context ended during the call
//
// canceled says the request's context had ended when the calls
// returned. The output is each query's merged list, the shards reported
// partial, or the error with the kinds it matches, whether the request is
// marked unavailable, and the shards counted in
// rlsearch_router_missing_shard_total with their policy label. Every
// merged list must also be sorted in rlsearch.Hit order and carry each
// hit's document.
func TestMergeTranscript(t *testing.T) {
	transcript.Run(t, "testdata/merge.txt", func(t *testing.T, c *transcript.Case) string {
		ks, ok := c.Arg("k")
		k, err := strconv.Atoi(ks)
		policy, _ := c.Arg("policy")
		if c.Cmd != "merge" || !ok || err != nil || (policy != Fail && policy != Partial) {
			t.Fatalf("%s: want merge k=N policy=fail|partial [canceled]", c.Pos())
		}
		var ctxErr error
		if _, ok := c.Arg("canceled"); ok {
			ctxErr = context.Canceled
		}
		lines := strings.Split(strings.TrimRight(c.Input, "\n"), "\n")
		n := len(lines)
		resps := make([]*RetrieveResponse, n)
		errs := make([]error, n)
		queries := -1
		for i, l := range lines {
			head, rest, ok := strings.Cut(l, ":")
			if !ok || head != strconv.Itoa(i) {
				t.Fatalf("%s: line %q: want %d: ANSWER", c.Pos(), l, i)
			}
			rest = strings.TrimSpace(rest)
			word, reason, _ := strings.Cut(rest, " ")
			switch word {
			case "down":
				errs[i] = &ShardError{Shard: i, Count: n, Reason: reason}
			case "4xx":
				errs[i] = fmt.Errorf("shard %d (%s): %w", i, "http://shard"+strconv.Itoa(i), &clientError{status: 400, msg: reason})
			case "gone":
				errs[i] = context.Canceled
			default:
				resp := &RetrieveResponse{Shard: i}
				for _, list := range strings.Split(rest, "|") {
					resp.Results = append(resp.Results, parseHits(t, c, list))
				}
				if queries >= 0 && len(resp.Results) != queries {
					t.Fatalf("%s: shard %d answers %d queries, another %d", c.Pos(), i, len(resp.Results), queries)
				}
				queries = len(resp.Results)
				resps[i] = resp
			}
		}
		var b strings.Builder
		v := onMissing(policy, errs, ctxErr)
		if v.err == nil {
			var buf []Hit
			for qi := range max(queries, 0) {
				buf = merge(buf[:0], resps, qi, k)
				fmt.Fprintf(&b, "query %d:", qi)
				for j, h := range buf {
					fmt.Fprintf(&b, " %d:%s", h.Row, strconv.FormatFloat(float64(h.Score), 'g', -1, 32))
					if h.ID != docID(h.Row) {
						t.Errorf("%s: query %d hit %d: row %d carries document %q", c.Pos(), qi, j, h.Row, h.ID)
					}
					if j > 0 && !rlsearch.Less(rlsearch.Hit{Row: int32(buf[j-1].Row), Score: buf[j-1].Score}, rlsearch.Hit{Row: int32(h.Row), Score: h.Score}) {
						t.Errorf("%s: query %d: hits %d and %d out of order", c.Pos(), qi, j-1, j)
					}
				}
				b.WriteString("\n")
			}
			if v.policy == Partial {
				for _, se := range v.failed {
					fmt.Fprintf(&b, "partial: %s\n", partialNote(se))
				}
			}
		} else {
			if len(v.failed) > 0 && v.policy == Partial {
				t.Errorf("%s: an error under the partial label", c.Pos())
			}
			fmt.Fprintf(&b, "error: %s\nkind:", v.err)
			for _, kind := range []struct {
				name string
				err  error
			}{{"ErrOverloaded", rlsearch.ErrOverloaded}, {"ErrBadInput", rlsearch.ErrBadInput}, {"context.Canceled", context.Canceled}} {
				if errors.Is(v.err, kind.err) {
					b.WriteString(" " + kind.name)
				}
			}
			var se *ShardError
			if errors.As(v.err, &se) {
				fmt.Fprintf(&b, " *ShardError(%s)", partialNote(se))
			}
			b.WriteString("\n")
			if len(v.failed) > 0 {
				b.WriteString("unavailable\n") // missing marks the request (server.MarkUnavailable)
			}
		}
		if len(v.failed) > 0 {
			b.WriteString("counted:")
			for _, se := range v.failed {
				fmt.Fprintf(&b, " shard=%d/policy=%s", se.Shard, v.policy)
			}
			b.WriteString("\n")
		}
		return b.String()
	})
}

// parseHits reads "ROW:SCORE ROW:SCORE ...", each hit with the document
// docID(ROW).
func parseHits(t *testing.T, c *transcript.Case, list string) []Hit {
	hits := []Hit{}
	for _, f := range strings.Fields(list) {
		rs, ss, ok := strings.Cut(f, ":")
		row, err1 := strconv.ParseInt(rs, 10, 64)
		score, err2 := strconv.ParseFloat(ss, 32)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("%s: hit %q: want ROW:SCORE", c.Pos(), f)
		}
		hits = append(hits, Hit{Row: row, Score: float32(score), ID: docID(row), Contents: "text of " + docID(row)})
	}
	return hits
}

func docID(row int64) string { return "doc-" + strconv.FormatInt(row, 10) }
