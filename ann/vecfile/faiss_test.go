package vecfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// faissCase is one faiss index written by python3-faiss.
type faissCase struct {
	name    string
	build   string // Python building `ix` from x (n × d, unit rows) and ids (a permutation)
	format  Format
	metric  Metric
	elem    int
	desc    string // substring of Info.Desc
	gather  bool
	graph   bool
	dim, n  int
	shuffle bool // rows are added with ids = perm (x[perm[i]] under id perm[i]), else 0..n-1
}

func faissCases() []faissCase {
	var cs []faissCase
	for _, s := range [][2]int{{1, 1}, {3, 7}, {33, 600}, {768, 130}, {5, 0}} {
		d, n := s[0], s[1]
		add := func(c faissCase) {
			c.dim, c.n = d, n
			c.name = fmt.Sprintf("%s_d%d_n%d", c.name, d, n)
			cs = append(cs, c)
		}
		add(faissCase{name: "hnsw_ip", build: "ix = faiss.IndexHNSWFlat(d, 4, faiss.METRIC_INNER_PRODUCT); ix.add(x)", format: FaissHNSW, metric: InnerProduct, elem: 4, desc: "IndexHNSW(M=4, storage IndexFlatIP)", graph: true})
		add(faissCase{name: "hnsw_l2", build: "ix = faiss.IndexHNSWFlat(d, 8); ix.add(x)", format: FaissHNSW, metric: L2, elem: 4, desc: "IndexHNSW(M=8, storage IndexFlatL2)", graph: true})
		add(faissCase{name: "hnsw_sq16", build: "ix = faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_fp16, 6, faiss.METRIC_INNER_PRODUCT); ix.train(x); ix.add(x)", format: FaissHNSW, metric: InnerProduct, elem: 2, desc: "storage IndexScalarQuantizer(QT_fp16)", graph: true})
		add(faissCase{name: "sq16", build: "ix = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT); ix.add(x)", format: FaissSQ, metric: InnerProduct, elem: 2, desc: "IndexScalarQuantizer(QT_fp16)"})
		if n > 0 {
			// full lists (most lists non-empty) and sparse lists (nlist > 2 × non-empty lists), with and without a direct map
			add(faissCase{name: "ivf_full", build: fmt.Sprintf("q = faiss.IndexFlatIP(d); ix = faiss.IndexIVFFlat(q, d, %d, faiss.METRIC_INNER_PRODUCT); ix.train(x); ix.add(x); ix.make_direct_map()", max(1, n/20)), format: FaissIVF, metric: InnerProduct, elem: 4, desc: "IndexIVFFlat", gather: true})
			add(faissCase{name: "ivf_sparse", build: "q = faiss.IndexFlatL2(d); ix = faiss.IndexIVFFlat(q, d, 64); q.add(np.vstack([x[:1]] * 64) + np.arange(64, dtype='float32')[:, None] * 10); ix.is_trained = True; ix.add(x)", format: FaissIVF, metric: L2, elem: 4, desc: "IndexIVFFlat(nlist=64)", gather: true})
		}
		add(faissCase{name: "idmap_flat", build: "ix = faiss.IndexIDMap(faiss.IndexFlatIP(d)); ix.add_with_ids(x[perm], perm)", format: FaissFlat, metric: InnerProduct, elem: 4, desc: "IndexIDMap(IndexFlatIP)", gather: n > 1, shuffle: true})
		add(faissCase{name: "idmap2_flat_identity", build: "ix = faiss.IndexIDMap2(faiss.IndexFlatL2(d)); ix.add_with_ids(x, np.arange(n))", format: FaissFlat, metric: L2, elem: 4, desc: "IndexIDMap2(IndexFlatL2)"})
		add(faissCase{name: "idmap_hnsw", build: "ix = faiss.IndexIDMap(faiss.IndexHNSWFlat(d, 4, faiss.METRIC_INNER_PRODUCT)); ix.add_with_ids(x[perm], perm)", format: FaissHNSW, metric: InnerProduct, elem: 4, desc: "IndexIDMap(IndexHNSW(M=4", gather: n > 1, graph: true, shuffle: true})
		add(faissCase{name: "idmap2_sq16", build: "ix = faiss.IndexIDMap2(faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)); ix.add_with_ids(x[perm], perm)", format: FaissSQ, metric: InnerProduct, elem: 2, desc: "IndexIDMap2(IndexScalarQuantizer(QT_fp16))", gather: n > 1, shuffle: true})
		if n > 0 {
			add(faissCase{name: "idmap_ivf", build: fmt.Sprintf("q = faiss.IndexFlatIP(d); iv = faiss.IndexIVFFlat(q, d, %d, faiss.METRIC_INNER_PRODUCT); iv.train(x); ix = faiss.IndexIDMap(iv); ix.add_with_ids(x[perm], perm)", max(1, n/20)), format: FaissIVF, metric: InnerProduct, elem: 4, desc: "IndexIDMap(IndexIVFFlat", gather: true, shuffle: true})
		}
	}
	return cs
}

// graphRef is faiss's own view of an HNSW graph, by row.
type graphRef struct {
	Levels    []int       `json:"levels"` // top level of each row
	Neighbors [][][]int32 `json:"neighbors"`
	Entry     int32       `json:"entry"`
	MaxLevel  int         `json:"max_level"`
	EfSearch  int         `json:"ef_search"`
	EfCons    int         `json:"ef_construction"`
}

// TestFaissIndexTypes reads every faiss index type the package accepts, as
// written by python3-faiss, and compares the rows bit for bit with faiss's
// reconstruction in row order (reconstruct_n, or reconstruct(id) through
// an IndexIDMap2; for IndexIDMap, which cannot reconstruct, the vector
// added under each id), and every HNSW graph's levels, entry point and
// neighbour lists with faiss's hnsw arrays read back through the Python
// API, translated to rows.
func TestFaissIndexTypes(t *testing.T) {
	testutil.RequireFaiss(t)
	dir := t.TempDir()
	cases := faissCases()
	var py strings.Builder
	py.WriteString(`import faiss, numpy as np, json
def graph(h, row_of):
    lv = faiss.vector_to_array(h.levels); off = faiss.vector_to_array(h.offsets); nb = faiss.vector_to_array(h.neighbors); cum = faiss.vector_to_array(h.cum_nneighbor_per_level)
    n = len(lv); levels = [0] * n; out = [None] * n
    for v in range(n):
        lists = []
        for l in range(lv[v]):
            s = nb[int(off[v]) + int(cum[l]): int(off[v]) + int(cum[l + 1])]
            s = [int(row_of[u]) for u in s[: (list(s) + [-1]).index(-1)]]
            lists.append(s)
        out[row_of[v]] = lists; levels[row_of[v]] = int(lv[v]) - 1
    e = int(row_of[h.entry_point]) if h.entry_point >= 0 else -1
    return {"levels": levels, "neighbors": out, "entry": e, "max_level": int(h.max_level), "ef_search": int(h.efSearch), "ef_construction": int(h.efConstruction)}
`)
	for i, c := range cases {
		fmt.Fprintf(&py, "rng = np.random.default_rng(%d); n, d = %d, %d\n", 100+i, c.n, c.dim)
		py.WriteString("x = rng.standard_normal((n, d)).astype('float32'); x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)\n")
		py.WriteString("perm = rng.permutation(n).astype('int64')\n")
		py.WriteString(c.build + "\n")
		fmt.Fprintf(&py, "faiss.write_index(ix, '%s.index')\n", c.name)
		fmt.Fprintf(&py, "ix = faiss.read_index('%s.index')\n", c.name)
		switch {
		case c.shuffle && strings.HasPrefix(c.name, "idmap2"):
			fmt.Fprintf(&py, "ref = np.array([ix.reconstruct(int(i)) for i in range(n)], dtype='float32').reshape(n, d)\n")
		case c.shuffle && c.elem == 4:
			py.WriteString("ref = x\n")
		case strings.HasPrefix(c.name, "idmap"):
			py.WriteString("ref = faiss.downcast_index(ix.index).reconstruct_n(0, n) if n else x\n")
		default:
			py.WriteString("ref = ix.reconstruct_n(0, n) if n else x\n")
		}
		fmt.Fprintf(&py, "ref.astype('<f4').tofile('%s.ref')\n", c.name)
		if c.graph {
			if c.shuffle {
				// storage position i holds the vector added i-th, under id perm[i]
				fmt.Fprintf(&py, "h = faiss.downcast_index(ix.index).hnsw; json.dump(graph(h, perm), open('%s.graph', 'w'))\n", c.name)
			} else {
				fmt.Fprintf(&py, "json.dump(graph(ix.hnsw, np.arange(n)), open('%s.graph', 'w'))\n", c.name)
			}
		}
	}
	testutil.RunPython(t, dir, 1, py.String())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Open(filepath.Join(dir, c.name+".index"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in := r.Info()
			if in.Format != c.format || in.Metric != c.metric || in.Count != c.n || in.Dim != c.dim || in.ElemSize != c.elem || in.Gathered != c.gather || !strings.Contains(in.Desc, c.desc) {
				t.Fatalf("Info = %+v, want format %s metric %v n %d d %d elem %d gathered %v desc ~%q", in, c.format, c.metric, c.n, c.dim, c.elem, c.gather, c.desc)
			}
			checkRows(t, r, testutil.ReadFloat32s(t, filepath.Join(dir, c.name+".ref")))
			g := r.Graph()
			if (g != nil) != c.graph {
				t.Fatalf("Graph() = %v, want a graph: %v", g, c.graph)
			}
			if g != nil {
				checkGraph(t, g, filepath.Join(dir, c.name+".graph"))
			}
		})
	}
}

func checkGraph(t *testing.T, g *Graph, refPath string) {
	t.Helper()
	raw, err := os.ReadFile(refPath)
	if err != nil {
		t.Fatal(err)
	}
	var ref graphRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if g.N != len(ref.Levels) || g.Entry != ref.Entry || g.MaxLevel != ref.MaxLevel || g.EfSearch != max(1, ref.EfSearch) || g.EfConstruction != ref.EfCons {
		t.Fatalf("graph N %d entry %d max level %d ef %d/%d, faiss %d %d %d %d/%d", g.N, g.Entry, g.MaxLevel, g.EfSearch, g.EfConstruction, len(ref.Levels), ref.Entry, ref.MaxLevel, ref.EfSearch, ref.EfCons)
	}
	if err := g.Uniform(); err != nil {
		t.Fatalf("Uniform: %v (faiss's default graph layout)", err)
	}
	levels, err := g.Levels()
	if err != nil {
		t.Fatal(err)
	}
	var buf []int32
	for row, l := range levels {
		if int(l) != ref.Levels[row] {
			t.Fatalf("row %d level %d, faiss %d", row, l, ref.Levels[row])
		}
		for lv := 0; lv <= int(l); lv++ {
			buf, err = g.Neighbours(buf[:0], int32(row), lv)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.Neighbors[row][lv]; !slices.Equal(buf, want) && !(len(buf) == 0 && len(want) == 0) {
				t.Fatalf("row %d level %d neighbours %v, faiss %v", row, lv, buf, want)
			}
		}
	}
}

// TestFaissRefused checks that lossy and unreadable faiss indexes are
// refused with ErrUnsupported naming the index type and saying what to
// pass instead.
func TestFaissRefused(t *testing.T) {
	testutil.RequireFaiss(t)
	dir := t.TempDir()
	testutil.RunPython(t, dir, 1, `import faiss, numpy as np
rng = np.random.default_rng(3); d = 8
x = rng.standard_normal((2000, d)).astype('float32')
def w(ix, name, train=True):
    if train: ix.train(x)
    ix.add(x[:50]); faiss.write_index(ix, name)
w(faiss.IndexPQ(d, 2, 4, faiss.METRIC_INNER_PRODUCT), 'pq.index')
w(faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT), 'sq8.index')
w(faiss.index_factory(d, "OPQ2,PQ2x4", faiss.METRIC_INNER_PRODUCT), 'opq.index')
w(faiss.index_factory(d, "IVF4,PQ2x4", faiss.METRIC_INNER_PRODUCT), 'ivfpq.index')
w(faiss.index_factory(d, "IVF4,SQfp16", faiss.METRIC_INNER_PRODUCT), 'ivfsq.index')
w(faiss.IndexHNSWPQ(d, 2, 4), "hnswpq.index")
w(faiss.index_factory(d, "HNSW4,SQ8", faiss.METRIC_INNER_PRODUCT), 'hnswsq8.index')
w(faiss.IndexLSH(d, 16), 'lsh.index')
ix = faiss.IndexFlat(d, faiss.METRIC_L1); ix.add(x[:5]); faiss.write_index(ix, 'l1.index')
`)
	for _, c := range []struct{ file, want string }{
		{"pq.index", `IndexPQ, product-quantized codes ("IxPq")`},
		{"sq8.index", "QT_8bit holds lossy codes"},
		{"opq.index", `IndexPreTransform`},
		{"ivfpq.index", `IndexIVFPQ`},
		{"ivfsq.index", `IndexIVFScalarQuantizer`},
		{"hnswpq.index", `IndexHNSWPQ`},
		{"hnswsq8.index", "QT_8bit holds lossy codes"},
		{"lsh.index", `IndexLSH`},
		{"l1.index", "metric 2"},
	} {
		_, err := Open(filepath.Join(dir, c.file))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrUnsupported mentioning %q", c.file, err, c.want)
		}
		if err != nil && c.file != "l1.index" && !strings.Contains(err.Error(), "e5_Flat.index") {
			t.Errorf("%s: %v: does not say what to pass instead", c.file, err)
		}
	}
}

// TestFaissTruncated cuts faiss files of every readable type at every
// length (and flips bytes of the headers): each cut must be refused with
// ErrFormat or ErrUnsupported, never a panic or a huge allocation.
func TestFaissTruncated(t *testing.T) {
	testutil.RequireFaiss(t)
	dir := t.TempDir()
	testutil.RunPython(t, dir, 1, `import faiss, numpy as np
rng = np.random.default_rng(5); d, n = 3, 9
x = rng.standard_normal((n, d)).astype('float32')
ix = faiss.IndexHNSWFlat(d, 2, faiss.METRIC_INNER_PRODUCT); ix.add(x); faiss.write_index(ix, 'hnsw.index')
q = faiss.IndexFlatIP(d); iv = faiss.IndexIVFFlat(q, d, 2, faiss.METRIC_INNER_PRODUCT); iv.train(x); iv.add(x); faiss.write_index(iv, 'ivf.index')
m = faiss.IndexIDMap2(faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16)); m.add_with_ids(x, np.arange(n)[::-1].copy()); faiss.write_index(m, 'idmap.index')
`)
	for _, name := range []string{"hnsw.index", "ivf.index", "idmap.index"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewReader(bytesReader(data), int64(len(data)), name); err != nil {
			t.Fatalf("%s: the whole file: %v", name, err)
		}
		for cut := 0; cut < len(data); cut++ {
			_, err := NewReader(bytesReader(data[:cut]), int64(cut), name)
			if err == nil || !(errors.Is(err, ErrFormat) || errors.Is(err, ErrUnsupported)) {
				t.Fatalf("%s cut at %d of %d bytes: err = %v", name, cut, len(data), err)
			}
		}
		for pos := 0; pos < len(data); pos++ {
			for _, v := range []byte{0, 0xff, 0x7f} {
				b := slices.Clone(data)
				b[pos] = v
				checkAnyFile(t, b, name)
			}
		}
	}
}

// checkAnyFile reads data as a vector file: an error must wrap ErrFormat or
// ErrUnsupported; an accepted file must read its rows and its graph
// without panicking.
func checkAnyFile(t *testing.T, data []byte, name string) {
	t.Helper()
	r, err := NewReader(bytesReader(data), int64(len(data)), name)
	if err != nil {
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
		}
		return
	}
	in := r.Info()
	buf := make([]float32, 3*in.Dim)
	rows := 0
	for {
		n, err := r.Read(buf)
		if err != nil {
			if err == io.EOF {
				break
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("read error %v is not ErrFormat", err)
			}
			return
		}
		rows += n
	}
	if rows != in.Count {
		t.Fatalf("read %d rows, header says %d", rows, in.Count)
	}
	if g := r.Graph(); g != nil {
		levels, err := g.Levels()
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("Levels: %v is not ErrFormat", err)
			}
			return
		}
		for row, l := range levels {
			for lv := 0; lv <= int(l); lv++ {
				if _, err := g.Neighbours(nil, int32(row), lv); err != nil && !errors.Is(err, ErrFormat) {
					t.Fatalf("Neighbours: %v is not ErrFormat", err)
				}
			}
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
