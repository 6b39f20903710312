package ann

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meminfo := filepath.Join(dir, "meminfo")
	write(meminfo, "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:       1000 kB\n")
	for _, c := range []struct {
		name, cgroup, max, current string
		want                       int64
		source                     string
	}{
		{"no cgroup file", "", "", "", 1000 * 1024, "MemAvailable"},
		{"cgroup v1 only", "1:memory:/x\n", "", "", 1000 * 1024, "MemAvailable"},
		{"unlimited", "0::/a/b\n", "max\n", "5\n", 1000 * 1024, "MemAvailable"},
		{"limit below MemAvailable", "0::/a/b\n", "512000\n", "100000\n", 412000, "cgroup memory.max"},
		{"limit above MemAvailable", "0::/a/b\n", "4096000000\n", "100000\n", 1000 * 1024, "MemAvailable"},
		{"over the limit", "0::/a/b\n", "1000\n", "5000\n", 0, "cgroup memory.max"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "cg")
			self := filepath.Join(t.TempDir(), "self-cgroup")
			if c.cgroup != "" {
				write(self, c.cgroup)
			}
			if c.max != "" {
				write(filepath.Join(root, "a/b/memory.max"), c.max)
				write(filepath.Join(root, "a/b/memory.current"), c.current)
			}
			m, err := readMemory(meminfo, self, root)
			if err != nil {
				t.Fatal(err)
			}
			if m.Available != c.want || !strings.HasPrefix(m.Source, c.source) {
				t.Fatalf("got %d (%s), want %d from %s", m.Available, m.Source, c.want, c.source)
			}
		})
	}
	if _, err := readMemory(filepath.Join(dir, "nope"), "", ""); err == nil {
		t.Error("missing meminfo accepted")
	}
	write(filepath.Join(dir, "bad"), "MemTotal: 5 kB\n")
	if _, err := readMemory(filepath.Join(dir, "bad"), "", ""); err == nil {
		t.Error("meminfo without MemAvailable accepted")
	}
	if m, err := SystemMemory(); err == nil && m.Available <= 0 {
		t.Errorf("SystemMemory = %+v", m)
	}
}

// TestOpenFollowsMemory checks "auto" on CPU against injected memory
// figures derived from EstimateMemory: HNSW when it fits, exact flat when
// only the shard fits, ErrNoMemory naming the fitting dtype when the shard
// does not, and a saved graph needing no build copy.
func TestOpenFollowsMemory(t *testing.T) {
	if g, err := openGPU(&Flat{h: Header{Dim: 16, DType: FP32}, f32: []float32{}}, GPUConfig{}); err == nil {
		g.(interface{ Close() error }).Close()
		t.Skip("a GPU is usable: auto chooses it regardless of host memory")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	const n, dim = 600, 16
	dir := t.TempDir()
	vecs := clustered(rng, n, dim, 20, 0.2)
	path := writeVectorFile(t, dir, vecs, dim, Header{DType: FP16}, nil)
	hc := HNSWConfig{M: 8, Seed: 1}
	shard := EstimateMemory(n, dim, FP16, BackendFlat, hc, false).Total()
	build := EstimateMemory(n, dim, FP16, BackendHNSW, hc, true).Total()
	loaded := EstimateMemory(n, dim, FP16, BackendHNSW, hc, false).Total()
	if !(shard < loaded && loaded < build) {
		t.Fatalf("estimates shard %d, hnsw loaded %d, hnsw built %d are not ordered", shard, loaded, build)
	}
	fixed := func(b int64) func() (MemInfo, error) {
		return func() (MemInfo, error) { return MemInfo{Available: b, Source: "test"}, nil }
	}
	graph := filepath.Join(dir, "g.hnsw")
	flat, err := ReadVectorFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cfg    Config
		want   string // backend, or "!" and an error substring
		reason string
	}{
		{"hnsw fits", Config{Path: path, FlatMax: 100, Memory: fixed(build)}, "hnsw", "needs"},
		{"hnsw build does not fit", Config{Path: path, FlatMax: 100, Memory: fixed(build - 1)}, "flat", "HNSW would need"},
		{"small corpus stays flat", Config{Path: path, Memory: fixed(1 << 30)}, "flat", "≤ FlatMax"},
		{"memory unknown", Config{Path: path, FlatMax: 100, Memory: func() (MemInfo, error) { return MemInfo{}, errors.New("no /proc") }}, "hnsw", "memory unknown"},
		{"shard does not fit, int8 would", Config{Path: path, Memory: fixed(shard - 1)}, "!int8", ""},
		{"nothing fits", Config{Path: path, Memory: fixed(100)}, "!no storage type fits", ""},
		{"loaded flat counts as held", Config{Flat: flat, Memory: fixed(0)}, "flat", "≤ FlatMax"},
		{"build saves the graph", Config{Path: path, FlatMax: 100, HNSWPath: graph, Memory: fixed(build)}, "hnsw", "needs"},
		{"saved graph needs no build copy", Config{Path: path, FlatMax: 100, HNSWPath: graph, Memory: fixed(loaded)}, "hnsw", "needs"},
		{"auto flat: the int8 scan fits", Config{Path: path, FlatInt8Scan: true, Memory: fixed(shard + Int8ScanMemory(n, dim))}, "flat", "; int8 scan (+"},
		{"auto flat: the int8 scan does not fit", Config{Path: path, FlatInt8Scan: true, Memory: fixed(shard + Int8ScanMemory(n, dim) - 1)}, "flat", "int8 scan not built: its codes need"},
		{"explicit flat builds the scan anyway", Config{Path: path, Backend: "flat", FlatInt8Scan: true, Memory: fixed(shard)}, "flat", "; int8 scan (+"},
		{"explicit hnsw is not refused", Config{Path: path, Backend: "hnsw", HNSWPath: graph, Memory: fixed(shard)}, "hnsw", "configured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.HNSW = hc
			o, err := Open(ctx, c.cfg)
			if strings.HasPrefix(c.want, "!") {
				if err == nil || !errors.Is(err, ErrNoMemory) || !strings.Contains(err.Error(), c.want[1:]) {
					t.Fatalf("err = %v, want ErrNoMemory mentioning %q", err, c.want[1:])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if o.Backend != c.want || !strings.Contains(o.Reason, c.reason) {
				t.Fatalf("backend %s (%s), want %s with a reason mentioning %q", o.Backend, o.Reason, c.want, c.reason)
			}
			if f, ok := o.Index.(*Flat); ok && (f.scan != nil) != strings.Contains(o.Reason, "; int8 scan (+") {
				t.Fatalf("int8 scan built %v, reason %q", f.scan != nil, o.Reason)
			}
			if h, ok := o.Index.(*HNSW); ok {
				if vb, _, _ := h.MemoryBytes(); vb != 0 {
					t.Errorf("HNSW from Open holds %d bytes of its own vectors besides the shard", vb)
				}
			}
		})
	}
}
