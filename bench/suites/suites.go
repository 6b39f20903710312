// Package suites holds the measurement sets of `rlsearch-bench run`: bm25,
// flat, hnsw, encode, rerank, programs, mutate, hybrid, rewards and gpu,
// each a bench.Suite measuring this project in process on real data from
// ../shared/data (fixed seeds). Peers (Lucene, faiss, Python) plug in
// through bench.RegisterPeer. See bench/README.md for every case and
// setting. No cgo here; encode and rerank need ONNX Runtime at run time.
package suites

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/bench"
)

var errConfig = bench.ErrConfig

// All returns every suite in the default order.
func All() []bench.Suite {
	return []bench.Suite{BM25(), Flat(), HNSW(), Encode(), Rerank(), Programs(), Mutate(), Hybrid(), Rewards(), GPU(), Serve()}
}

// Default is the suite list of a plain `rlsearch-bench run`.
func Default() []string { return bench.SuiteNames(All()) }

// skipf returns an error wrapping bench.ErrSkip.
func skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", bench.ErrSkip, fmt.Sprintf(format, args...))
}

// ints parses a comma-separated list of positive integers.
func ints(what, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: %s: %q is not a positive integer", errConfig, what, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s: empty list", errConfig, what)
	}
	return out, nil
}

// list splits a comma-separated list, dropping empty items.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// pick returns quick when the run is quick, else full.
func pick(env *bench.Env, quick, full string) string {
	if env.Quick {
		return quick
	}
	return full
}

// dataFile returns dataDir/rel, or a skip error naming it when missing.
func dataFile(env *bench.Env, rel string) (string, error) {
	p := filepath.Join(env.Data, rel)
	if _, err := os.Stat(p); err != nil {
		return "", skipf("dataset %s not found (set --data)", p)
	}
	return p, nil
}

// workDir returns env.Work/sub, created.
func workDir(env *bench.Env, sub string) (string, error) {
	if env.Work == "" {
		return "", errors.New("suites: no work directory")
	}
	d := filepath.Join(env.Work, sub)
	return d, os.MkdirAll(d, 0o755)
}

// cores is runtime.NumCPU, for "threads=all" defaults.
func cores() int { return runtime.NumCPU() }
