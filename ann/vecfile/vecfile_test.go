package vecfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// readAll reads every row with a chunk of chunkRows rows.
func readAll(t *testing.T, r *Reader, chunkRows int) []float32 {
	t.Helper()
	in := r.Info()
	buf := make([]float32, chunkRows*in.Dim)
	var all []float32
	for {
		n, err := r.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read at row %d: %v", r.Row(), err)
		}
		all = append(all, buf[:n*in.Dim]...)
	}
	return all
}

// TestAgainstFaissAndNumpy reads files written by faiss.write_index,
// np.save (float32, float16; format versions 1, 2, 3) and an .fvecs writer,
// and compares bit for bit with faiss's own reconstruct_n (or the numpy
// array widened to float32).
func TestAgainstFaissAndNumpy(t *testing.T) {
	testutil.RequireFaiss(t)
	dir := t.TempDir()
	type tc struct {
		name    string
		dim, n  int
		format  Format
		metric  Metric
		elem    int
		version int // npy
	}
	var cases []tc
	for _, s := range [][2]int{{1, 1}, {3, 7}, {33, 1000}, {768, 130}, {5, 0}} {
		d, n := s[0], s[1]
		cases = append(cases,
			tc{fmt.Sprintf("ip_d%d_n%d", d, n), d, n, FaissFlat, InnerProduct, 4, 0},
			tc{fmt.Sprintf("l2_d%d_n%d", d, n), d, n, FaissFlat, L2, 4, 0},
			tc{fmt.Sprintf("f32_d%d_n%d", d, n), d, n, NPY, Unknown, 4, 1},
			tc{fmt.Sprintf("f16_d%d_n%d", d, n), d, n, NPY, Unknown, 2, 1},
			tc{fmt.Sprintf("f32v2_d%d_n%d", d, n), d, n, NPY, Unknown, 4, 2},
			tc{fmt.Sprintf("f16v3_d%d_n%d", d, n), d, n, NPY, Unknown, 2, 3},
		)
		if n > 0 {
			cases = append(cases, tc{fmt.Sprintf("fv_d%d_n%d", d, n), d, n, FVecs, Unknown, 4, 0})
		}
	}
	var py strings.Builder
	py.WriteString("import faiss, numpy as np\nrng = np.random.default_rng(7)\n")
	for _, c := range cases {
		fmt.Fprintf(&py, "x = rng.standard_normal((%d, %d)).astype('float32')\n", c.n, c.dim)
		py.WriteString("x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)\n")
		switch c.format {
		case FaissFlat:
			cls := "IndexFlatIP"
			if c.metric == L2 {
				cls = "IndexFlatL2"
			}
			fmt.Fprintf(&py, "ix = faiss.%s(%d); ix.add(x); faiss.write_index(ix, '%s.index')\n", cls, c.dim, c.name)
			fmt.Fprintf(&py, "ix = faiss.read_index('%s.index'); ix.reconstruct_n(0, ix.ntotal).astype('<f4').tofile('%s.ref')\n", c.name, c.name)
		case NPY:
			dt := "float32"
			if c.elem == 2 {
				dt = "float16"
			}
			fmt.Fprintf(&py, "a = x.astype('%s')\nwith open('%s.npy', 'wb') as f: np.lib.format.write_array(f, a, version=(%d, 0))\n", dt, c.name, c.version)
			fmt.Fprintf(&py, "np.load('%s.npy').astype('<f4').tofile('%s.ref')\n", c.name, c.name)
		case FVecs:
			fmt.Fprintf(&py, "np.hstack([np.full((%d, 1), %d, dtype='<i4').view('<f4'), x]).astype('<f4').tofile('%s.fvecs')\n", c.n, c.dim, c.name)
			fmt.Fprintf(&py, "x.astype('<f4').tofile('%s.ref')\n", c.name)
		}
	}
	testutil.RunPython(t, dir, 1, py.String())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ext := map[Format]string{FaissFlat: ".index", NPY: ".npy", FVecs: ".fvecs"}[c.format]
			r, err := Open(filepath.Join(dir, c.name+ext))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in := r.Info()
			if in.Format != c.format || in.Metric != c.metric || in.Count != c.n || in.Dim != c.dim || in.ElemSize != c.elem {
				t.Fatalf("Info = %+v, want format %s metric %v n %d d %d elem %d", in, c.format, c.metric, c.n, c.dim, c.elem)
			}
			checkRows(t, r, testutil.ReadFloat32s(t, filepath.Join(dir, c.name+".ref")))
		})
	}
}

// TestRefusedNumpy checks the clear errors for arrays this package does not
// read.
func TestRefusedNumpy(t *testing.T) {
	testutil.RequireFaiss(t)
	dir := t.TempDir()
	testutil.RunPython(t, dir, 1, `import numpy as np
x = np.arange(12, dtype='float32').reshape(3, 4)
np.save('fortran.npy', np.asfortranarray(x))
np.save('f64.npy', x.astype('float64'))
np.save('big.npy', x.astype('>f4'))
np.save('int.npy', x.astype('int32'))
np.save('oned.npy', x[0])
`)
	for _, c := range []struct{ file, want string }{
		{"fortran.npy", "fortran_order"},
		{"f64.npy", "float64"},
		{"big.npy", "big-endian"},
		{"int.npy", `"<i4"`},
		{"oned.npy", "want (n, d)"},
	} {
		_, err := Open(filepath.Join(dir, c.file))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrUnsupported mentioning %q", c.file, err, c.want)
		}
	}
}

// faissBytes builds an IndexFlatIP file by hand (the layout checked against
// faiss in TestAgainstFaissAndNumpy).
func faissBytes(d, n int, vals []float32) []byte {
	le := binary.LittleEndian
	b := []byte("IxFI")
	b = le.AppendUint32(b, uint32(d))
	b = le.AppendUint64(b, uint64(n))
	b = le.AppendUint64(b, 1<<20)
	b = le.AppendUint64(b, 1<<20)
	b = append(b, 1)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(n*d))
	for _, v := range vals {
		b = le.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func npyBytes(header string, data []byte) []byte {
	h := header
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), data...)
}

func fvecsBytes(d int, rows [][]float32) []byte {
	var b []byte
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint32(b, uint32(d))
		for _, v := range r {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

// TestHostile checks that damaged headers give errors naming the offset
// and field, and that every truncation of a valid file is refused.
func TestHostile(t *testing.T) {
	good := faissBytes(3, 2, []float32{1, 0, 0, 0, 1, 0})
	set := func(b []byte, off int, v uint64, size int) []byte {
		c := bytes.Clone(b)
		switch size {
		case 4:
			binary.LittleEndian.PutUint32(c[off:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(c[off:], v)
		}
		return c
	}
	cases := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"huge ntotal", "x.index", set(good, 8, 1<<40, 8), "offset 8: ntotal"},
		{"ntotal fits but file short", "x.index", set(set(good, 8, 1000, 8), 37, 3000, 8), "offset 45: xb data"},
		{"negative d", "x.index", set(good, 4, 0xffffffff, 4), "offset 4: d"},
		{"size mismatch", "x.index", set(good, 37, 7, 8), "offset 37: xb size"},
		{"metric mismatch", "x.index", set(good, 33, 1, 4), "offset 33: metric_type"},
		{"trailing bytes", "x.index", append(bytes.Clone(good), 0), "trailing"},
		{"npy huge shape", "x.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 768), }", nil), "truncated"},
		{"npy bad dict", "x.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), ", make([]byte, 8)), "offset 10: header"},
		{"npy overflow shape", "x.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", nil), "shape"},
		{"npy header past end", "x.npy", []byte("\x93NUMPY\x01\x00\xff\x00{"), "offset 8: header length"},
		{"npy v2 huge header", "x.npy", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), "offset 8: header length"},
		{"npy version", "x.npy", []byte("\x93NUMPY\x04\x00\x00\x00"), "offset 6: version"},
		{"fvecs bad row dim", "x.fvecs", append(fvecsBytes(2, [][]float32{{1, 2}}), fvecsBytes(3, [][]float32{{1, 2}})...), "offset 12: d"},
		{"fvecs truncated", "x.fvecs", fvecsBytes(2, [][]float32{{1, 2}})[:10], "not a multiple"},
		{"fvecs zero dim", "x.fvecs", make([]byte, 8), "offset 0: d"},
		{"unknown", "x.bin", []byte("hello"), "not a faiss"},
		{"other faiss", "x.index", []byte("IxHNxxxx"), "IndexFlatIP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), c.file)
			if err == nil {
				_, err = io.ReadAll(readerOf(r))
			}
			if err == nil || !(errors.Is(err, ErrFormat) || errors.Is(err, ErrUnsupported)) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrFormat/ErrUnsupported mentioning %q", err, c.want)
			}
		})
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"x.index", good},
		{"x.npy", npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", make([]byte, 8))},
	} {
		for cut := 0; cut < len(f.data); cut++ {
			_, err := NewReader(bytes.NewReader(f.data[:cut]), int64(cut), f.name)
			if err == nil {
				t.Errorf("%s cut at %d of %d bytes: no error", f.name, cut, len(f.data))
			}
		}
	}
}

// checkRows reads every row of r with chunks of 1, 7 and 4,096 rows and
// compares them bit for bit with want (faiss's or numpy's values).
func checkRows(t *testing.T, r *Reader, want []float32) {
	t.Helper()
	d := r.Info().Dim
	for _, chunk := range []int{1, 7, 4096} {
		r.Rewind()
		got := readAll(t, r, chunk)
		if len(got) != len(want) {
			t.Fatalf("chunk %d: %d values, reference %d", chunk, len(got), len(want))
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("chunk %d: value %d (row %d) = %v, faiss/numpy %v", chunk, i, i/d, got[i], want[i])
			}
		}
	}
}

// readerOf adapts a Reader to io.Reader over the decoded rows (tests only).
func readerOf(r *Reader) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		buf := make([]float32, max(1, 64*r.Info().Dim))
		n, err := r.Read(buf)
		if err != nil {
			return 0, err
		}
		return min(len(p), n), nil
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// FuzzParseHeader reads arbitrary bytes as a vector file of each kind:
// every error wraps ErrFormat or ErrUnsupported, an accepted .npy/.fvecs
// header accounts for every byte, and an accepted file reads all its rows
// (and, for a faiss HNSW, its whole graph) without panicking. The corpus in
// testdata/fuzz holds faiss HNSW, IVF and IDMap files written by
// python3-faiss besides the found cases.
func FuzzParseHeader(f *testing.F) {
	f.Add(faissBytes(3, 2, []float32{1, 0, 0, 0, 1, 0}), uint8(0))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", make([]byte, 8)), uint8(1))
	f.Add(fvecsBytes(2, [][]float32{{1, 2}, {3, 4}}), uint8(2))
	names := []string{"a.index", "a.npy", "a.fvecs"}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		name := names[int(which)%len(names)]
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), name)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
			}
			return
		}
		if in := r.Info(); (in.Format == NPY || in.Format == FVecs) && in.DataOffset+int64(in.Count)*in.RowBytes != int64(len(data)) {
			t.Fatalf("accepted header %+v does not account for %d bytes", in, len(data))
		}
		checkAnyFile(t, data, name)
	})
}
