// Package indexbench is the single-index measurement of `rlsearch-bench
// index --index DIR` (scripts/bench-scale.sh reads its table, JSON and TREC run
// file): index open time, BM25 batch 1 and batch N, dense flat search and
// E5 retrieval when the index has a vector file, and /retrieve over HTTP at
// a given concurrency. The suites of `rlsearch-bench run` are in bench/suites.
package indexbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/loadgen"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/procstat"
)

// Measurement sets (Config.Mode, `bench --mode`).
const (
	ModeAll  = "all"  // everything
	ModeBM25 = "bm25" // BM25 only: no HTTP, no dense
	ModeHTTP = "http" // /retrieve only
)

// Modes are the measurement sets, in the order the flag lists them.
var Modes = []string{ModeAll, ModeBM25, ModeHTTP}

// Config configures Run.
type Config struct {
	Index *index.Index
	// Handler serves /retrieve for the HTTP measurement (modes all and
	// http); nil in mode bm25.
	Handler http.Handler
	Mode    string
	// Questions are the query workload; Texts their question strings.
	Questions []bench.Question
	Texts     []string
	// K is top-k; Batch the queries per SearchBatch call; Concurrency the
	// HTTP clients; Duration the time of each measurement.
	K, Batch, Concurrency int
	Duration              time.Duration
	// RunOut, when set, receives the BM25 top-K of every question in TREC
	// run format.
	RunOut string
	// ListenAddr is where the HTTP measurement listens (127.0.0.1:0 for a
	// free port).
	ListenAddr string
	// OpenMs and CheckDocs describe how the caller opened the index (for
	// the table).
	OpenMs    float64
	CheckDocs bool
}

// Run measures and prints the table (measurement, value, unit, notes) to
// stdout, and returns the measurements by key (as --json writes them) and
// the number of failed /retrieve requests (the command fails on any, after
// reporting). Not safe for concurrent use with other measurements.
func Run(ctx context.Context, cfg Config, stdout io.Writer) (metrics map[string]any, httpErrs int, err error) {
	ix, texts, qs, k, batch, mode, runOut, dur, concurrency := cfg.Index, cfg.Texts, cfg.Questions, cfg.K, cfg.Batch, cfg.Mode, cfg.RunOut, cfg.Duration, cfg.Concurrency
	openMs := cfg.OpenMs
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "measurement\tvalue\tunit\tnotes\n")
	metrics = map[string]any{"mode": mode, "passages": ix.Len(), "questions": len(texts), "k": k, "gomaxprocs": runtime.GOMAXPROCS(0)}
	row := func(key, name string, v float64, unit, note string) {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\n", name, v, unit, note)
		metrics[key] = v
	}
	row("build_passages_per_s", "index build", float64(ix.Meta.NumDocs)/ix.Meta.BuildSeconds, "passages/s", fmt.Sprintf("%d passages in %.1fs (meta.json)", ix.Meta.NumDocs, ix.Meta.BuildSeconds))
	what := "index.Open"
	if mode != ModeBM25 {
		what = "index.Open + server setup"
	}
	row("open_ms", "index open", openMs, "ms", fmt.Sprintf("%s, --check-docs=%v", what, cfg.CheckDocs))

	if mode != ModeHTTP {
		// A warm-up pass over the questions, which also writes the run file.
		if err := writeRun(ix, texts, qs, k, runOut); err != nil {
			return metrics, httpErrs, err
		}
		// BM25, one query per call and whole batches.
		var searchErr error
		n, el := loop(dur, func(i int) int {
			if _, err := ix.BM25.SearchErr(texts[i%len(texts)], k); err != nil && searchErr == nil {
				searchErr = err
			}
			return 1
		})
		row("bm25_batch1_qps", "bm25 search, batch 1", float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("k=%d, one goroutine", k))
		bt := Cycle(texts, batch)
		n, el = loop(dur, func(i int) int {
			if _, err := ix.BM25.SearchBatch(ctx, bt, k); err != nil && searchErr == nil {
				searchErr = err
			}
			return len(bt)
		})
		metrics["batch"] = batch
		row("bm25_batchN_qps", fmt.Sprintf("bm25 search, batch %d", batch), float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("SearchBatch on GOMAXPROCS=%d", runtime.GOMAXPROCS(0)))
		if searchErr != nil {
			return metrics, httpErrs, fmt.Errorf("bench: BM25 search failed, the figures above are meaningless: %w", searchErr)
		}
	}

	if e5, ok := ix.Retrievers()[rlsearch.RetrieverE5]; ok && mode == ModeAll {
		vecs, err := ix.Encoder().EncodeQueries(ctx, texts)
		if err != nil {
			return metrics, httpErrs, err
		}
		d := ix.Dense.Dim()
		for _, b := range []int{1, 64} {
			nq := len(texts)
			n, el := loop(dur, func(i int) int {
				lo := (i * b) % (nq - b + 1)
				ix.Dense.Search(ctx, vecs[lo*d:(lo+b)*d], k)
				return b
			})
			row(fmt.Sprintf("dense_batch%d_qps", b), fmt.Sprintf("dense flat search, batch %d", b), float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("%d × %d %s, k=%d, vectors only", ix.Dense.Len(), d, ix.Dense.Header().DType, k))
		}
		n, el := loop(dur, func(i int) int {
			lo := (i * 64) % (len(texts) - 64 + 1)
			e5.Retrieve(ctx, texts[lo:lo+64], k)
			return 64
		})
		row("e5_batch64_qps", "e5 retrieve, batch 64", float64(n)/el.Seconds(), "queries/s", "encoder + flat search")
	}

	if mode != ModeBM25 {
		// HTTP /retrieve at the given concurrency, one query per request.
		ln, err := net.Listen("tcp", cfg.ListenAddr)
		if err != nil {
			return metrics, httpErrs, err
		}
		hs := &http.Server{Handler: cfg.Handler}
		go hs.Serve(ln)
		defer hs.Close()
		url := "http://" + ln.Addr().String() + "/retrieve"
		for _, name := range slices.Sorted(maps.Keys(ix.Retrievers())) {
			rps, p50, p99, errs := httpLoad(ctx, url, name, texts, k, concurrency, dur)
			httpErrs += errs
			metrics["retrieve_"+name+"_p50_ms"] = p50
			metrics["retrieve_"+name+"_p99_ms"] = p99
			metrics["retrieve_"+name+"_errors"] = errs
			metrics["concurrency"] = concurrency
			row("retrieve_"+name+"_rps", fmt.Sprintf("/retrieve %s, concurrency %d", name, concurrency), rps, "requests/s",
				fmt.Sprintf("1 query/request, topk=%d, p50 %.1f ms, p99 %.1f ms, %d errors", k, p50, p99, errs))
		}
	}
	rss := "VmHWM of this process: index + server + load generator"
	if mode == ModeBM25 {
		rss = "VmHWM of this process: index + searches"
	}
	row("peak_rss_mib", "peak RSS", float64(PeakRSS())/(1<<20), "MiB", rss)
	return metrics, httpErrs, nil
}

// Cycle returns n texts taken from texts in order, starting over at the end.
func Cycle(texts []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = texts[i%len(texts)]
	}
	return out
}

// writeRun searches every question once (BM25, top k) and, when path is not
// empty, writes the hits in TREC run format: "qid Q0 docid rank score rlsearch",
// rank from 1, one line per hit, questions in file order.
func writeRun(ix *index.Index, texts []string, qs []bench.Question, k int, path string) error {
	var buf bytes.Buffer
	for i, q := range texts {
		hits, err := ix.BM25.SearchErr(q, k)
		if err != nil {
			return fmt.Errorf("bench: question %d: %w", i+1, err)
		}
		if path == "" {
			continue
		}
		qid := qs[i].ID
		if qid == "" {
			qid = strconv.Itoa(i + 1)
		}
		for r, h := range hits {
			d, err := ix.Doc(h.Row)
			if err != nil {
				return err
			}
			fmt.Fprintf(&buf, "%s Q0 %s %d %s rlsearch\n", qid, d.ID, r+1, strconv.FormatFloat(float64(h.Score), 'g', -1, 32))
		}
	}
	if path == "" {
		return nil
	}
	return bench.WriteFileAtomic(path, buf.Bytes())
}

// loop calls fn until d has passed and returns the summed work and the time.
func loop(d time.Duration, fn func(i int) int) (int, time.Duration) {
	start := time.Now()
	n := 0
	for i := 0; time.Since(start) < d || i == 0; i++ {
		n += fn(i)
	}
	return n, time.Since(start)
}

// httpLoad runs c clients posting single-query requests for d
// (loadgen.RunClosed) and returns requests/s, p50 and p99 in ms, and the
// failed requests.
func httpLoad(ctx context.Context, url, retriever string, texts []string, k, c int, d time.Duration) (rps, p50, p99 float64, errs int) {
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(1))
	res, _ := loadgen.RunClosed(ctx, loadgen.ClosedConfig{URL: url, Concurrency: c, Duration: d, Timeout: 30 * time.Second,
		Body: func(int) []byte {
			mu.Lock()
			q := texts[rng.Intn(len(texts))]
			mu.Unlock()
			body, _ := json.Marshal(map[string]any{"queries": []string{q}, "topk": k, "return_scores": true, "retriever": retriever})
			return body
		}})
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return res.Throughput, ms(res.P50), ms(res.P99), res.Errors
}

// PeakRSS is the process's peak resident set size in bytes (VmHWM), or 0.
func PeakRSS() int64 {
	n, _ := procstat.Bytes(0, "VmHWM")
	return n
}
