package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/server"
)

// benchModes are the measurement sets of `rlsearch bench --mode`.
var benchModes = []string{"all", "bm25", "http"}

// runBench dispatches `rlsearch bench`: `compare OLD NEW`, the single-index
// measurement when --index is given (scripts/bench-scale.sh), else the
// suites (benchsuites.go).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "compare" {
		return runBenchCompare(args[1:], stdout, stderr)
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if n := strings.TrimLeft(a, "-"); len(n) < len(a) && (n == "index" || strings.HasPrefix(n, "index=")) {
			return runBenchIndex(ctx, args, stdout, stderr)
		}
	}
	return runBenchSuites(ctx, args, stdout, stderr)
}

// runBenchIndex measures one index directory (--index): BM25, dense and
// /retrieve throughput, as scripts/bench-scale.sh reads it.
func runBenchIndex(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var httpErrs int // failed /retrieve requests: the command fails after reporting them
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		s           serveFlags
		questions   string
		dur         time.Duration
		k           int
		concurrency int
		mode        string
		batch       int
		runOut      string
		jsonOut     string
	)
	s.bind(fs)
	fs.StringVar(&questions, "questions", defaultQuestions(), "question set JSONL used as the query workload")
	fs.DurationVar(&dur, "duration", 3*time.Second, "time spent on each measurement")
	fs.IntVar(&k, "k", 10, "top-k per query")
	fs.IntVar(&concurrency, "concurrency", 32, "concurrent HTTP clients for the /retrieve measurement")
	fs.StringVar(&mode, "mode", "all", "what to measure: all; bm25 (index open time, BM25 batch 1 and batch --batch on GOMAXPROCS cores, no HTTP); http (/retrieve only)")
	fs.IntVar(&batch, "batch", 0, "queries per SearchBatch call in the BM25 batch measurement, cycling through the questions (0 = the number of questions)")
	fs.StringVar(&runOut, "run-out", "", "write the BM25 top-k of every question to this file, TREC run format (qid Q0 docid rank score rlsearch)")
	fs.StringVar(&jsonOut, "json", "", "also write the measurements to this file as one JSON object")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	// --addr (bound with the serve flags) is where the /retrieve measurement
	// listens when given; by default a free loopback port, so that bench
	// never collides with a running server on 8000.
	listenAddr := "127.0.0.1:0"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "addr" {
			listenAddr = s.addr
		}
	})
	if !slices.Contains(benchModes, mode) {
		return usageErr("--mode %q: want one of %v", mode, benchModes)
	}
	switch {
	case batch < 0:
		return usageErr("--batch %d: want >= 0 (0 = the number of questions)", batch)
	case k <= 0:
		return usageErr("--k %d: want > 0", k)
	case concurrency <= 0:
		return usageErr("--concurrency %d: want > 0", concurrency)
	case dur <= 0:
		return usageErr("--duration %v: want > 0", dur)
	}
	qs, err := bench.LoadQuestions(questions)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return usageErr("--questions %s has no questions", questions)
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	if batch == 0 {
		batch = len(texts)
	}

	// Open the index: index.Open alone in bm25 mode, the whole server otherwise.
	var (
		srv      *server.Server
		ix       *index.Index
		closeAll func()
	)
	t0 := time.Now()
	if mode == "bm25" {
		ix, closeAll, err = s.idx.open(ctx)
	} else {
		srv, ix, closeAll, err = s.newServer(ctx, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}
	if err != nil {
		return err
	}
	defer closeAll()
	openMs := float64(time.Since(t0).Microseconds()) / 1000

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "measurement\tvalue\tunit\tnotes\n")
	metrics := map[string]any{"mode": mode, "passages": ix.Len(), "questions": len(texts), "k": k, "gomaxprocs": runtime.GOMAXPROCS(0)}
	row := func(key, name string, v float64, unit, note string) {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\n", name, v, unit, note)
		metrics[key] = v
	}
	row("build_passages_per_s", "index build", float64(ix.Meta.NumDocs)/ix.Meta.BuildSeconds, "passages/s", fmt.Sprintf("%d passages in %.1fs (meta.json)", ix.Meta.NumDocs, ix.Meta.BuildSeconds))
	what := "index.Open"
	if mode != "bm25" {
		what = "index.Open + server setup"
	}
	row("open_ms", "index open", openMs, "ms", fmt.Sprintf("%s, --verify-docs=%v", what, s.idx.verifyDocs))

	if mode != "http" {
		// A warm-up pass over the questions, which also writes the run file.
		if err := writeRun(ix, texts, qs, k, runOut); err != nil {
			return err
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
		bt := cycle(texts, batch)
		n, el = loop(dur, func(i int) int {
			if _, err := ix.BM25.SearchBatch(ctx, bt, k); err != nil && searchErr == nil {
				searchErr = err
			}
			return len(bt)
		})
		metrics["batch"] = batch
		row("bm25_batchN_qps", fmt.Sprintf("bm25 search, batch %d", batch), float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("SearchBatch on GOMAXPROCS=%d", runtime.GOMAXPROCS(0)))
		if searchErr != nil {
			return fmt.Errorf("bench: BM25 search failed, the figures above are meaningless: %w", searchErr)
		}
	}

	if e5, ok := ix.Retrievers()["e5"]; ok && mode == "all" {
		vecs, err := ix.Encoder().EncodeQueries(ctx, texts)
		if err != nil {
			return err
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

	if mode != "bm25" {
		// HTTP /retrieve at the given concurrency, one query per request.
		ln, err := net.Listen("tcp", listenAddr)
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: srv.Handler()}
		go hs.Serve(ln)
		defer hs.Close()
		url := "http://" + ln.Addr().String() + "/retrieve"
		defer func() { // after the table and the JSON file are written
			if err == nil && httpErrs > 0 {
				err = fmt.Errorf("bench: %d /retrieve requests failed (see the errors column)", httpErrs)
			}
		}()
		for _, name := range names(ix.Retrievers()) {
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
	if mode == "bm25" {
		rss = "VmHWM of this process: index + searches"
	}
	row("peak_rss_mib", "peak RSS", float64(peakRSS())/(1<<20), "MiB", rss)
	if jsonOut != "" {
		raw, err := json.MarshalIndent(metrics, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileAtomic(jsonOut, append(raw, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// cycle returns n texts taken from texts in order, starting over at the end.
func cycle(texts []string, n int) []string {
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
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// into place.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
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

// httpLoad runs c clients posting single-query requests for d.
func httpLoad(ctx context.Context, url, retriever string, texts []string, k, c int, d time.Duration) (rps, p50, p99 float64, errs int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}, Timeout: 30 * time.Second}
	var mu sync.Mutex
	var lat []float64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			var mine []float64
			bad := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				body, _ := json.Marshal(map[string]any{"queries": []string{texts[rng.Intn(len(texts))]}, "topk": k, "return_scores": true, "retriever": retriever})
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, float64(time.Since(t0).Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}(int64(w))
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	if len(lat) == 0 {
		return 0, 0, 0, errs
	}
	slices.Sort(lat)
	return float64(len(lat)) / el, bench.Percentile(lat, 50), bench.Percentile(lat, 99), errs
}

// peakRSS is the process's peak resident set size in bytes (VmHWM), or 0.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
