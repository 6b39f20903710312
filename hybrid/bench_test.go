package hybrid

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExecute runs generated gold programs (mixed levels, seed 5) on
// each shipped collection, batched as the HTTP API batches them, and
// reports programs/s and the share of time in vector retrieval (BM25) and
// in SQLite.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"amazon_toys", "enron_emails"} {
		c := shipped(b, name)
		insts, _, err := Generate(ctx, c, GenConfig{N: 64, Seed: 5})
		if err != nil || len(insts) == 0 {
			b.Fatal(err)
		}
		var ps []Program
		for _, in := range insts {
			ps = append(ps, in.Program)
		}
		for _, batch := range []int{1, 64} {
			b.Run(name+"/batch="+itoa(batch), func(b *testing.B) {
				var retr, sqlT time.Duration
				n := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					lo := (i * batch) % len(ps)
					chunk := ps[lo:min(lo+batch, len(ps))]
					for _, r := range c.ExecuteBatch(ctx, chunk) {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
						retr += r.Timing.Retrieval
						sqlT += r.Timing.SQL
						n++
					}
				}
				el := b.Elapsed().Seconds()
				b.ReportMetric(float64(n)/el, "programs/s")
				b.ReportMetric(float64(retr.Microseconds())/float64(n), "retrieval-µs/program")
				b.ReportMetric(float64(sqlT.Microseconds())/float64(n), "sql-µs/program")
			})
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
