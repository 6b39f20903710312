package ann

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// MemInfo is the memory this process may still use.
type MemInfo struct {
	// Available is the smaller of /proc/meminfo's MemAvailable and, under a
	// cgroup v2 limit, memory.max − memory.current; bytes.
	Available int64
	// Source says where the number came from, for logs and /healthz.
	Source string
}

// SystemMemory reads MemAvailable from /proc/meminfo and, when this process
// is in a cgroup v2 group with a memory.max other than "max", the room
// left under it (memory.max − memory.current). Errors: /proc/meminfo
// missing or unreadable (not Linux).
func SystemMemory() (MemInfo, error) {
	return readMemory("/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup")
}

func readMemory(meminfo, selfCgroup, cgroupRoot string) (MemInfo, error) {
	b, err := os.ReadFile(meminfo)
	if err != nil {
		return MemInfo{}, fmt.Errorf("ann: memory: %w", err)
	}
	avail := int64(-1)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return MemInfo{}, fmt.Errorf("ann: memory: %s: MemAvailable %q", meminfo, f[1])
			}
			avail = kb * 1024
		}
	}
	if avail < 0 {
		return MemInfo{}, fmt.Errorf("ann: memory: %s has no MemAvailable line", meminfo)
	}
	m := MemInfo{Available: avail, Source: "MemAvailable " + GiB(avail)}
	// cgroup v2: one line "0::/path".
	cg, err := os.ReadFile(selfCgroup)
	if err != nil {
		return m, nil
	}
	for _, line := range strings.Split(string(cg), "\n") {
		rest, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		dir := filepath.Join(cgroupRoot, filepath.Clean("/"+rest))
		maxB, err1 := os.ReadFile(filepath.Join(dir, "memory.max"))
		curB, err2 := os.ReadFile(filepath.Join(dir, "memory.current"))
		if err1 != nil || err2 != nil {
			break
		}
		ms := strings.TrimSpace(string(maxB))
		if ms == "max" {
			break
		}
		lim, err1 := strconv.ParseInt(ms, 10, 64)
		cur, err2 := strconv.ParseInt(strings.TrimSpace(string(curB)), 10, 64)
		if err1 != nil || err2 != nil {
			break
		}
		room := max(0, lim-cur)
		m.Source += fmt.Sprintf("; cgroup memory.max %s, %s in use", GiB(lim), GiB(cur))
		if room < m.Available {
			m.Available = room
			m.Source = fmt.Sprintf("cgroup memory.max %s − %s in use (MemAvailable %s)", GiB(lim), GiB(cur), GiB(avail))
		}
		break
	}
	return m, nil
}

// GiB formats bytes as GiB with two decimals.
func GiB(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// MemoryNeed is an estimate of the resident bytes a backend needs for one
// shard.
type MemoryNeed struct {
	Vectors int64 // the vector file's vectors in host memory (every backend keeps them)
	Graph   int64 // HNSW links, levels and per-searcher visited sets
	Codes   int64 // HNSW int8 traversal codes when the shard is not int8
	Build   int64 // transient while building an HNSW graph: a float32 copy
}

// Total is the peak: all of the above.
func (m MemoryNeed) Total() int64 { return m.Vectors + m.Graph + m.Codes + m.Build }

// EstimateMemory estimates the resident bytes of backend ("flat", "hnsw",
// "gpu": host side only) over n vectors of dim values stored as dt.
// building adds the float32 copy an HNSW build holds until ShareVectors.
// Graph: level 0 keeps 2M+1 int32 per node, each node has a level byte and
// a 24-byte upper-level slice header, and 1/(M−1) upper levels on average
// (level draws with mL = 1/ln M, paper §4) of M+1 int32; each searcher
// (GOMAXPROCS of them) keeps a visited array of 1.25 n uint32.
func EstimateMemory(n, dim int, dt DType, backend string, hc HNSWConfig, building bool) MemoryNeed {
	n64, d := int64(n), int64(dim)
	need := MemoryNeed{Vectors: n64 * d * int64(dt.size())}
	if backend != BackendHNSW {
		return need
	}
	c := hc.withDefaults()
	m := int64(c.M)
	need.Graph = n64*(4*(2*m+1)+1+24) + n64*4*(m+1)/(m-1) + int64(runtime.GOMAXPROCS(0))*n64*5
	if c.Int8 && dt != INT8 {
		need.Codes = n64 * d
	}
	if building {
		need.Build = n64 * d * 4
	}
	return need
}

// Int8ScanMemory is the resident bytes that (*Flat).Int8Scan adds to a
// shard of n vectors of dim values: one int8 code per value, rows padded to
// 32 bytes (the scan kernels' width), plus a float32 scale and offset per
// dimension.
func Int8ScanMemory(n, dim int) int64 {
	return int64(n)*int64(int8ScanStride(dim)) + 8*int64(dim)
}

// int8ScanStride is the padded row length of Int8Scan's codes: dim rounded
// up to 32, so that the four-row scan kernels have no scalar tail.
func int8ScanStride(dim int) int { return (dim + 31) &^ 31 }

// ErrNoMemory is returned (wrapped) by Open when "auto" finds no backend
// whose estimated resident memory fits what is available.
var ErrNoMemory = errors.New("ann: not enough memory for the dense vector file")
