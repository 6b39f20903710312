package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rlsearch/rlsearch/bench"
)

// faiss builds.
const (
	// BuildDebian is Debian's python3-faiss: compiled for the generic
	// x86-64 baseline, so HNSW distances run in scalar code.
	BuildDebian = "debian"
	// BuildAVX2 is Debian's faiss source rebuilt with FAISS_OPT_LEVEL=avx2
	// by bench/peers/setup-faiss-avx2.sh (`make bench-setup`): the fair peer.
	BuildAVX2 = "avx2"
	// BuildHNSWLib is not a faiss build: Debian's python3-hnswlib, run by
	// the same script (its "lib" field) for the hnsw suite only.
	BuildHNSWLib = "hnswlib"
)

// hnswlibAvailable reports whether Debian's python imports hnswlib.
func hnswlibAvailable() bool {
	return exec.Command(Python, "-c", "import hnswlib").Run() == nil
}

// openmpBLAS is where Debian's libopenblas0-openmp puts its libblas.so.3 and
// libopenblas.so.0. Putting it first on LD_LIBRARY_PATH gives faiss an
// OpenBLAS that shares its OpenMP runtime without changing the system's
// libblas alternative (pthread OpenBLAS next to faiss's OpenMP collapsed
// batch-64 flat search to 337 q/s against 751-912 q/s, issue 15).
const openmpBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

// FlatConfig is the Config key of an exact flat search measurement; ours
// must use it with the same values for the ratio to form.
func FlatConfig(data string, n, dim, k, batch, threads int) string {
	return fmt.Sprintf("%s n=%d dim=%d top%d batch=%d threads=%d", data, n, dim, k, batch, threads)
}

// HNSWConfig is the Config key of an HNSW measurement (M, efConstruction,
// efSearch as faiss and ours name them).
func HNSWConfig(data string, n, dim, m, efc, ef, k, batch, threads int) string {
	return fmt.Sprintf("%s n=%d dim=%d M=%d efc=%d ef=%d top%d batch=%d threads=%d", data, n, dim, m, efc, ef, k, batch, threads)
}

func avx2Dir(o Options) string {
	if d := os.Getenv("FAISS_AVX2_DIR"); d != "" {
		return d
	}
	return filepath.Join(o.Root, ".cache", "faiss-avx2")
}

func avx2Built(o Options) bool {
	_, err := os.Stat(filepath.Join(avx2Dir(o), "python", "faiss", ".built"))
	return err == nil
}

// faissEnv is the environment of a faiss peer process of build at threads.
func faissEnv(o Options, build string, threads int) []string {
	t := fmt.Sprint(threads)
	kv := []string{"OMP_NUM_THREADS", t, "OPENBLAS_NUM_THREADS", t, "OMP_WAIT_POLICY", o.OMPWaitPolicy, "PYTHONPATH", ""}
	if build == BuildAVX2 {
		kv[len(kv)-1] = filepath.Join(avx2Dir(o), "python")
	}
	if _, err := os.Stat(openmpBLAS); err == nil {
		ld := openmpBLAS
		if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
			ld += ":" + old
		}
		kv = append(kv, "LD_LIBRARY_PATH", ld)
	}
	return env(kv...)
}

// faissSystem is the System name of a build, with faiss's version.
func faissSystem(build string, e []string) (string, error) {
	if build == BuildHNSWLib {
		cmd := exec.Command(Python, "-c", "import hnswlib, importlib.metadata as m; print(m.version('hnswlib'))")
		cmd.Env = e
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%w: import hnswlib: %v: %s (apt-get install python3-hnswlib)", ErrMissing, err, strings.TrimSpace(string(out)))
		}
		return "hnswlib-" + strings.TrimSpace(string(out)), nil
	}
	cmd := exec.Command(Python, "-c", "import faiss; print(faiss.__version__)")
	cmd.Env = e
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: import faiss (%s build): %v: %s", ErrMissing, build, err, strings.TrimSpace(string(out)))
	}
	name := "faiss-" + strings.TrimSpace(string(out))
	if build == BuildAVX2 {
		return name + "-avx2", nil
	}
	return name + "-debian", nil
}

// faissJob is the JSON job of faiss_peer.py.
type faissJob struct {
	System  string     `json:"system"`
	Lib     string     `json:"lib,omitempty"` // "hnswlib", or faiss when empty
	Threads int        `json:"threads"`
	K       int        `json:"k"`
	TimeS   float64    `json:"time_s"`
	Reps    int        `json:"reps"`
	Batches []int      `json:"batches"`
	M       int        `json:"M"`
	EFC     int        `json:"efc"`
	EFs     []int      `json:"efs"`
	Out     string     `json:"out"`
	Sets    []faissSet `json:"sets"`
}

type faissSet struct {
	Name      string `json:"name"`
	Mode      string `json:"mode"`
	Base      string `json:"base"`
	Queries   string `json:"queries"`
	Normalize bool   `json:"normalize"`
}

func runFaiss(ctx context.Context, suite string, o Options, progress io.Writer) ([]bench.Row, error) {
	builds := o.FaissBuilds
	if len(builds) == 0 {
		builds = []string{BuildDebian}
		if avx2Built(o) {
			builds = append(builds, BuildAVX2)
		} else {
			fmt.Fprintf(progress, "peers: faiss AVX2 build missing in %s: only Debian's generic (scalar HNSW) faiss runs; `make bench-setup` builds the fair peer\n", avx2Dir(o))
		}
		if suite == "hnsw" {
			if hnswlibAvailable() {
				builds = append(builds, BuildHNSWLib)
			} else {
				fmt.Fprintf(progress, "peers: hnswlib missing (apt-get install python3-hnswlib): no hnswlib rows\n")
			}
		}
	}
	var rows []bench.Row
	for _, build := range builds {
		for _, t := range o.Threads {
			e := faissEnv(o, build, t)
			sys, err := faissSystem(build, e)
			if err != nil {
				return rows, err
			}
			job := faissJob{System: sys, Threads: t, K: o.K, TimeS: o.Duration.Seconds(), Reps: o.Reps, Batches: o.Batches,
				M: o.M, EFC: o.EFConstruction, EFs: o.EFSearch, Out: filepath.Join(o.WorkDir, fmt.Sprintf("faiss-%s-%s-%d.json", suite, build, t))}
			if build == BuildHNSWLib {
				if suite != "hnsw" {
					continue
				}
				job.Lib = "hnswlib"
			}
			for _, v := range o.Vectors {
				job.Sets = append(job.Sets, faissSet{Name: v.Name, Mode: suite, Base: v.Base, Queries: v.Queries, Normalize: v.Normalize})
			}
			jobPath := job.Out + ".job"
			b, _ := json.Marshal(job)
			if err := os.WriteFile(jobPath, b, 0o644); err != nil {
				return rows, err
			}
			fmt.Fprintf(progress, "peers: %s %s threads=%d\n", sys, suite, t)
			if err := runPython(ctx, o, e, progress, "faiss_peer.py", jobPath); err != nil {
				return rows, err
			}
			got, err := readRows(job.Out)
			if err != nil {
				return rows, err
			}
			for i := range got {
				if err := keyFaiss(&got[i]); err != nil {
					return rows, err
				}
			}
			rows = append(rows, got...)
		}
	}
	return rows, nil
}

// keyFaiss sets r.Config from its Params with FlatConfig/HNSWConfig.
func keyFaiss(r *bench.Row) error {
	p := r.Params
	data, _ := p["data"].(string)
	n, dim, k, b, t := pint(p, "n"), pint(p, "dim"), pint(p, "k"), pint(p, "batch"), pint(p, "threads")
	switch r.Suite {
	case "flat":
		r.Config = FlatConfig(data, n, dim, k, b, t)
	case "hnsw":
		r.Config = HNSWConfig(data, n, dim, pint(p, "M"), pint(p, "efc"), pint(p, "ef"), k, b, t)
	default:
		return fmt.Errorf("%w: faiss_peer.py wrote a row of suite %q", ErrPeer, r.Suite)
	}
	if len(r.Reps) == 0 || data == "" || n == 0 || dim == 0 {
		return fmt.Errorf("%w: faiss_peer.py wrote an incomplete row %+v", ErrPeer, p)
	}
	return nil
}

// pint reads an integer parameter decoded from JSON (float64).
func pint(p map[string]any, k string) int {
	switch v := p[k].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// readRows reads a peer script's JSON array of bench.Row. Not
// bench.ReadRows: the scripts leave Config empty for the Go side to fill
// from the measured parameters, so the rows validate only after that.
func readRows(path string) ([]bench.Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPeer, err)
	}
	var rows []bench.Row
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON array of rows: %v", ErrPeer, path, err)
	}
	return rows, nil
}
