package suites

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/peers"
)

// The peers of package bench/peers, wired into every `rlsearch-bench run` run:
// faiss (Debian's build and the AVX2 rebuild of `make bench-setup`) next to
// flat and hnsw, CPython next to programs, and the serve suite (ours and the
// Search-R1-style Python server under one load generator).
func init() {
	bench.RegisterPeer("faiss", []string{"flat", "hnsw"}, FaissPeer)
	bench.RegisterPeer("cpython", []string{"programs"}, CPythonPeer)
}

// peerOptions is the peers.Options of a run: its threads, repetitions and
// directories; one repetition lasts the run's MinTime (at least 200 ms, so
// that a --min-time 1ms test still measures something), one serve step too
// (at least 1 s).
func peerOptions(o bench.Options) (peers.Options, error) {
	work, err := filepath.Abs(filepath.Join(o.Work, "peers"))
	if err != nil {
		return peers.Options{}, err
	}
	po := peers.Options{Threads: slices.Clone(o.Threads), Reps: o.Reps, Quick: o.Quick, Duration: max(o.MinTime, 200*time.Millisecond),
		Root: o.Root, Data: o.Data, WorkDir: work}
	// A serve rate-search step lasts one repetition's time too (≥ 1 s; the
	// load generator stretches low rates to 200 arrivals for the p99).
	po.Serve.Step = max(o.MinTime, time.Second)
	if po.Root != "" {
		if po.Root, err = filepath.Abs(po.Root); err != nil {
			return peers.Options{}, err
		}
	}
	return po, nil
}

// peerErr turns a missing peer (peers.ErrMissing: the message names the
// make target) into a skip line of the report.
func peerErr(err error) error {
	if errors.Is(err, peers.ErrMissing) {
		return fmt.Errorf("%w: %v", bench.ErrSkip, err)
	}
	return err
}

// vectorFiles returns the files of the vector set name as the flat and hnsw
// suites read them: the real sets of Data/vectors (the uint8 ones
// normalised), or a generated set's files in Work/vectors (GenVectorSet).
func vectorFiles(o bench.Options, name string) (peers.VectorSet, error) {
	if genName.MatchString(name) {
		dir := filepath.Join(o.Work, "vectors", fmt.Sprintf("%s-seed%d", name, o.Seed))
		return peers.VectorSet{Name: name, Base: filepath.Join(dir, "base.fvecs"), Queries: filepath.Join(dir, "query.fvecs")}, nil
	}
	for _, v := range vectorSets {
		if v.name == name {
			dir := filepath.Join(o.Data, "vectors", v.dir)
			return peers.VectorSet{Name: name, Base: filepath.Join(dir, v.base), Queries: filepath.Join(dir, v.query), Normalize: v.bytes}, nil
		}
	}
	return peers.VectorSet{}, fmt.Errorf("%w: unknown vector set %q", errConfig, name)
}

// pnum reads an integer parameter (int in memory, float64 after JSON).
func pnum(p map[string]any, k string) int {
	switch v := p[k].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// FaissPeer measures faiss on the flat or hnsw configurations of ours
// (o.Ours): the same vector files, thread counts, batch sizes and, for
// hnsw, M, efConstruction and efSearch values, each faiss build (Debian's;
// the AVX2 rebuild when `make bench-setup` made it; --set faiss.builds=
// avx2,hnswlib chooses). Its rows carry the
// Config of the matching row of ours (peers.FlatConfig, peers.HNSWConfig).
// Rows of ours that faiss cannot match are left without a peer: flat.dtype
// other than fp32, and sets truncated by flat.n / hnsw.n (faiss reads the
// whole files). Skipped when faiss is not installed (make bench-setup).
func FaissPeer(ctx context.Context, suite string, o bench.PeerOptions) ([]bench.Row, error) {
	po, err := peerOptions(o.Options)
	if err != nil {
		return nil, err
	}
	// "faiss.builds" (e.g. avx2,hnswlib) limits the builds measured: at 1M
	// each peer builds its own graph, tens of minutes apiece.
	if v := o.Options.Set["faiss.builds"]; v != "" {
		po.FaissBuilds = strings.Split(v, ",")
	}
	var sets []string
	var threads []int
	batches := map[int][]int{} // threads → batch sizes (hnsw: 1 at one thread, 64 on more)
	var efs []int
	m, efc := 0, 0
	for _, r := range o.Ours {
		if dt, ok := r.Params["dtype"]; ok && dt != "fp32" {
			continue
		}
		if only, _ := r.Params["ours_only"].(bool); only {
			continue // a width of ours alone (hnsw.ours_ef)
		}
		data, _ := r.Params["data"].(string)
		vs, err := vectorFiles(o.Options, data)
		if err != nil {
			continue
		}
		full, err := vectorRows(vs.Base)
		if err != nil || full != pnum(r.Params, "n") {
			fmt.Fprintf(o.Log, "faiss: %s: ours uses %d of the set's rows; faiss reads the whole file, no ratio\n", data, pnum(r.Params, "n"))
			continue
		}
		if !slices.Contains(sets, data) {
			sets = append(sets, data)
		}
		t, b := pnum(r.Params, "threads"), pnum(r.Params, "batch")
		if !slices.Contains(threads, t) {
			threads = append(threads, t)
		}
		if !slices.Contains(batches[t], b) {
			batches[t] = append(batches[t], b)
		}
		if ef := pnum(r.Params, "ef"); ef > 0 && !slices.Contains(efs, ef) {
			efs = append(efs, ef)
		}
		m, efc = pnum(r.Params, "M"), pnum(r.Params, "efc")
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%w: no configuration of ours that faiss can match (fp32, whole vector files)", bench.ErrSkip)
	}
	for _, s := range sets {
		vs, _ := vectorFiles(o.Options, s)
		po.Vectors = append(po.Vectors, vs)
	}
	po.K, po.M, po.EFConstruction, po.EFSearch = 10, m, efc, efs
	// One peers.Run per thread count with that count's batch sizes (flat:
	// the same list for every count, so one run).
	var groups [][]int
	if suite == "flat" {
		groups = [][]int{threads}
		po.Batches = batches[threads[0]]
	} else {
		for _, t := range threads {
			groups = append(groups, []int{t})
		}
	}
	var rows []bench.Row
	for _, g := range groups {
		po.Threads = g
		if suite == "hnsw" {
			po.Batches = batches[g[0]]
		}
		got, err := peers.Run(ctx, suite, po, o.Log)
		for _, r := range got {
			// Params as ours name them, so that plots put faiss and ours in
			// series that differ by system only.
			delete(r.Params, "index")
			if suite == "flat" {
				r.Params["dtype"] = "fp32"
			}
			rows = append(rows, r)
		}
		if err != nil {
			return rows, peerErr(err)
		}
	}
	return rows, nil
}

// vectorRows is the number of rows of a TEXMEX .fvecs or .bvecs file, from
// its size and first dimension.
func vectorRows(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hdr [4]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, fmt.Errorf("suites: %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	w := int64(4)
	if filepath.Ext(path) == ".bvecs" {
		w = 1
	}
	row := 4 + w*int64(binary.LittleEndian.Uint32(hdr[:]))
	if row <= 4 || st.Size()%row != 0 {
		return 0, fmt.Errorf("suites: %s: size %d is not a multiple of the row size %d", path, st.Size(), row)
	}
	return int(st.Size() / row), nil
}

// CPythonPeer runs the programs peer: CPython exec() of rollout programs
// over a stub SDK, next to ours (the Go runtime) over the equivalent Go
// stub, both measured by peers.Run in the same run and returned together
// under peers.ProgramsConfig keys. These stub rows measure the program
// runtime alone; the programs suite's own rows (RunBatch on the real BM25
// index, with and without coalescing) have no Python counterpart and keep
// their own configs, so no measurement appears twice.
func CPythonPeer(ctx context.Context, suite string, o bench.PeerOptions) ([]bench.Row, error) {
	po, err := peerOptions(o.Options)
	if err != nil {
		return nil, err
	}
	rows, err := peers.Run(ctx, suite, po, o.Log)
	return rows, peerErr(err)
}

// Serve is the serve suite: `rlsearch serve` and the Search-R1-style
// FastAPI server (bench/peers; Xapian BM25 for the bm25 route, faiss over
// the same vectors with precomputed query vectors for the e5 route) on
// loopback, each under the
// open-loop load of bench/loadgen: the highest request rate whose p99 stays
// at or under 100 ms (one rate search per repetition), then latency at a
// common rate (half the lower of the two maxima). Both systems' rows come
// from one peers.Run; with --peers=false only ours runs. Needs bin/rlsearch
// (or the running rlsearch binary) and, for the peer, `make bench-setup`.
func Serve() bench.Suite {
	return bench.Suite{Name: "serve", Doc: "/retrieve under open-loop load on loopback: highest rate at p99 <= 100 ms, ours and a Search-R1-style Python server",
		Rows: func(ctx context.Context, env *bench.Env) ([]bench.Row, error) {
			po, err := peerOptions(env.Options)
			if err != nil {
				return nil, err
			}
			if !env.Peers {
				po.Serve.Systems = []string{peers.SystemOurs}
			}
			// The dense route is opt-in (serve.routes=bm25,e5): it adds
			// 1.5-2 minutes per repetition, past the 15-minute report.
			// serve.model (default the test model of `make testmodel`),
			// serve.ort (default $ONNXRUNTIME_LIB, else .cache/ort).
			po.Model = env.Get("serve", "model", "")
			po.ORTLib = env.Get("serve", "ort", "")
			po.Serve.Routes = strings.Split(env.Get("serve", "routes", peers.RouteBM25), ",")
			rows, err := peers.Run(ctx, "serve", po, env.Log)
			return rows, peerErr(err)
		}}
}
