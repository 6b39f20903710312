package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rlsearch/rlsearch/bench"
)

func init() {
	bench.RegisterPeer("lucene", []string{"bm25"}, LucenePeer)
}

// LucenePeer runs Lucene 8 (Debian liblucene8-java) on the bm25 suite's
// corpora and questions with bench/lucene (BenchIndex builds the index as
// Pyserini does, BenchSearch times BM25(0.9, 0.4) top-k on one JVM thread
// after a JIT warm-up of "bm25.lucene_warmup" CPU seconds, default 5,
// quick 2), for the one-thread configurations of ours: batch 1,
// and batch B (Lucene has no batch API: B queries back to back). One JVM
// run per repetition; no per-query latencies. Skipped when java, javac or
// the Lucene jars are missing (make bench-peers installs them).
func LucenePeer(ctx context.Context, suite string, o bench.PeerOptions) ([]bench.Row, error) {
	env := &bench.Env{Options: o.Options, Log: o.Log}
	cp, version, err := luceneClasspath()
	if err != nil {
		return nil, err
	}
	src := env.Path("bench", "lucene")
	classes := filepath.Join(o.Work, "lucene-classes")
	if _, err := os.Stat(filepath.Join(classes, "BenchSearch.class")); err != nil {
		files, _ := filepath.Glob(filepath.Join(src, "*.java"))
		if len(files) == 0 {
			return nil, skipf("no Java sources in %s (run from the repository root)", src)
		}
		tmp := classes + ".tmp"
		os.RemoveAll(tmp)
		fmt.Fprintf(o.Log, "compiling %s\n", src)
		if out, err := exec.CommandContext(ctx, "javac", append([]string{"-cp", cp, "-d", tmp}, files...)...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("javac: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, classes); err != nil {
			return nil, err
		}
	}
	cp += ":" + classes
	questions := filepath.Join(o.Data, wikiQuestions)
	// The one-thread configurations of ours, by corpus.
	type target struct {
		corpus  string
		batches map[int]bench.Row
	}
	var targets []*target
	byCorpus := map[string]*target{}
	for _, r := range o.Ours {
		t, _ := r.Params["threads"].(int)
		b, _ := r.Params["batch"].(int)
		c, _ := r.Params["corpus"].(string)
		if t != 1 || b < 1 || c == "" {
			continue
		}
		if byCorpus[c] == nil {
			byCorpus[c] = &target{corpus: c, batches: map[int]bench.Row{}}
			targets = append(targets, byCorpus[c])
		}
		byCorpus[c].batches[b] = r
	}
	dur := max(o.MinTime, 500*time.Millisecond).Seconds()
	// JIT warm-up in thread CPU seconds before the timed loops
	// (scripts/bench-scale.sh uses 10): "bm25.lucene_warmup".
	warm := 5.0
	if o.Quick {
		warm = 2
	}
	if v := env.Get("bm25", "lucene_warmup", ""); v != "" {
		if _, err := fmt.Sscanf(v, "%g", &warm); err != nil || warm < 0 {
			return nil, fmt.Errorf("%w: bm25.lucene_warmup=%q: want seconds", errConfig, v)
		}
	}
	var rows []bench.Row
	for _, tg := range targets {
		corpus, err := corpusPath(o.Options, tg.corpus)
		if err != nil {
			return rows, err
		}
		idx, err := luceneIndex(ctx, env, cp, tg.corpus, corpus)
		if err != nil {
			return rows, err
		}
		// BenchSearch measures batch 1 and batch B in one run; one run per B
		// (batch 1 alone when ours has no larger one-thread batch).
		var bs []int
		for b := range tg.batches {
			if b > 1 {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			bs = []int{1}
		}
		made := map[int]*bench.Row{}
		for rep := 0; rep < o.Reps; rep++ {
			for _, b := range bs {
				fmt.Fprintf(o.Log, "lucene %s batch %d rep %d/%d\n", tg.corpus, b, rep+1, o.Reps)
				res, err := luceneSearch(ctx, cp, idx, questions, b, dur, warm)
				if err != nil {
					return rows, err
				}
				for bb, qps := range map[int]float64{1: res.Batch1, b: res.BatchN} {
					ours, ok := tg.batches[bb]
					if !ok || (bb == 1 && made[1] != nil && len(made[1].Reps) > rep) {
						continue
					}
					if made[bb] == nil {
						made[bb] = &bench.Row{Suite: suite, System: "lucene-" + version, Config: ours.Config, Params: ours.Params, Unit: ours.Unit,
							Note: "Lucene " + version + " (Debian liblucene8-java), BM25(0.9, 0.4), one JVM search thread after a JIT warm-up; batch B = B queries back to back"}
					}
					made[bb].Reps = append(made[bb].Reps, bench.Rep{Throughput: qps, Ops: int64(qps * dur), Elapsed: time.Duration(dur * float64(time.Second))})
				}
			}
		}
		for _, b := range append([]int{1}, bs...) {
			if r := made[b]; r != nil {
				rows = append(rows, *r)
				made[b] = nil
			}
		}
	}
	return rows, nil
}

// luceneClasspath finds Debian's Lucene 8 core and analyzers jars and
// jackson-core, and returns the class path and Lucene's version.
func luceneClasspath() (string, string, error) {
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "", skipf("%s not found (make bench-peers installs default-jdk-headless, liblucene8-java, libjackson2-core-java)", tool)
		}
	}
	core, _ := filepath.Glob("/usr/share/java/lucene-core-8*.jar")
	an, _ := filepath.Glob("/usr/share/java/lucene-analyzers-common-8*.jar")
	jackson := "/usr/share/java/jackson-core.jar"
	if _, err := os.Stat(jackson); err != nil || len(core) == 0 || len(an) == 0 {
		return "", "", skipf("Lucene 8 jars not found in /usr/share/java (make bench-peers installs liblucene8-java, libjackson2-core-java)")
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(core[0]), "lucene-core-"), ".jar")
	return core[0] + ":" + an[0] + ":" + jackson, version, nil
}

// corpusPath maps the bm25 suite's corpus names back to files.
func corpusPath(o bench.Options, name string) (string, error) {
	if name == "wiki18k" {
		return filepath.Join(o.Data, wikiCorpus), nil
	}
	var n int
	if _, err := fmt.Sscanf(name, "gen%d", &n); err == nil {
		return filepath.Join(o.Work, "gencorpus", fmt.Sprintf("gen-%d-seed%d.jsonl.zst", n, o.Seed)), nil
	}
	return "", fmt.Errorf("lucene: unknown corpus %q", name)
}

// luceneIndex builds (once per corpus file version) the Lucene index of
// corpus in Work/lucene-<name> with BenchIndex, streaming .zst corpora
// decompressed.
func luceneIndex(ctx context.Context, env *bench.Env, cp, name, corpus string) (string, error) {
	dir := filepath.Join(env.Work, "lucene-"+name)
	st, err := os.Stat(corpus)
	if err != nil {
		return "", err
	}
	stamp := fmt.Sprintf("%s %d %d\n", corpus, st.Size(), st.ModTime().UnixNano())
	if old, err := os.ReadFile(dir + ".source"); err == nil && string(old) == stamp {
		return dir, nil
	}
	fmt.Fprintf(env.Log, "building the Lucene index of %s in %s\n", corpus, dir)
	os.RemoveAll(dir)
	f, err := os.Open(corpus)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(corpus, ".zst") {
		d, err := zstd.NewReader(f)
		if err != nil {
			return "", err
		}
		defer d.Close()
		in = d
	}
	cmd := exec.CommandContext(ctx, "java", "-XX:ActiveProcessorCount=1", "-Xmx2g", "-cp", cp, "BenchIndex", "--corpus", "-", "--out", dir)
	cmd.Stdin = in
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lucene BenchIndex: %v\n%s", err, out)
	}
	return dir, bench.WriteFileAtomic(dir+".source", []byte(stamp))
}

type luceneResult struct {
	Batch1 float64 `json:"bm25_batch1_qps"`
	BatchN float64 `json:"bm25_batchN_qps"`
}

// luceneSearch runs BenchSearch once and parses its last stdout line.
func luceneSearch(ctx context.Context, cp, idx, questions string, batch int, dur, warm float64) (luceneResult, error) {
	cmd := exec.CommandContext(ctx, "java", "-XX:ActiveProcessorCount=1", "-Xmx1g", "-cp", cp, "BenchSearch", "--index", idx, "--questions", questions,
		"--k", "10", "--batch", fmt.Sprint(batch), "--duration", fmt.Sprint(dur), "--warmup", fmt.Sprint(warm))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return luceneResult{}, fmt.Errorf("lucene BenchSearch: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r luceneResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Batch1 <= 0 {
		return r, fmt.Errorf("lucene BenchSearch: bad output %q: %v", lines[len(lines)-1], err)
	}
	return r, nil
}
