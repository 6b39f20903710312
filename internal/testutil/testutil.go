// Package testutil locates the native parts that scripts/setup.sh installs
// (ONNX Runtime, tokenizer files, the test-model generator) and the shared
// datasets, for tests across packages. Test-only; not for users.
package testutil

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// EnvRequireNative makes a missing native part fail a test instead of
// skipping it; .ci/run sets it after scripts/setup.sh.
const EnvRequireNative = "RLSEARCH_REQUIRE_NATIVE"

// Python is Debian's interpreter, which has python3-onnx and python3-numpy.
const Python = "/usr/bin/python3"

// RequireNative skips tb because what is missing, or fails it when
// RLSEARCH_REQUIRE_NATIVE=1.
func RequireNative(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv(EnvRequireNative) == "1" {
		tb.Fatalf("%s missing (%s=1; run scripts/setup.sh)", what, EnvRequireNative)
	}
	tb.Skipf("%s missing (run scripts/setup.sh)", what)
}

// RepoRoot is the repository root: the nearest parent of the working
// directory with a go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("testutil: no go.mod above the working directory")
		}
		dir = parent
	}
}

// ORTLib returns $ONNXRUNTIME_LIB or setup.sh's library, absolute; it calls
// RequireNative when the file is missing.
func ORTLib(tb testing.TB) string {
	tb.Helper()
	lib := NativeFile(tb, "ONNXRUNTIME_LIB", filepath.Join(".cache", "ort", "libonnxruntime.so.1"), "ONNX Runtime library")
	abs, _ := filepath.Abs(lib)
	return abs
}

// NativeFile returns $env, else rel (slash-separated or not) under the
// repository root; it calls RequireNative, naming what, when the file is
// missing.
func NativeFile(tb testing.TB, env, rel, what string) string {
	tb.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(RepoRoot(tb), rel)
	}
	if _, err := os.Stat(p); err != nil {
		RequireNative(tb, what+" "+p)
	}
	return p
}

var (
	genMu   sync.Mutex
	genDirs = map[string]string{} // script and arguments -> directory
)

// GenModel runs the model generator scripts/<script> ("gen --out DIR
// ARGS...", real architecture, random weights) once per test binary and
// argument list, and returns DIR: name inside a fresh directory of the OS
// temp dir. Needs Debian's python3-onnx and numpy (skips without, fails
// under RLSEARCH_REQUIRE_NATIVE=1). RemoveGenerated deletes them.
func GenModel(tb testing.TB, name, script string, args ...string) string {
	tb.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	key := script + " " + strings.Join(args, " ")
	if dir, ok := genDirs[key]; ok {
		return dir
	}
	if err := exec.Command(Python, "-c", "import onnx, numpy").Run(); err != nil {
		RequireNative(tb, "python3-onnx and python3-numpy for "+Python)
	}
	base, err := os.MkdirTemp("", "rlsearch-model-")
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(base, name)
	cmd := exec.Command(Python, append([]string{filepath.Join(RepoRoot(tb), "scripts", script), "gen", "--out", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", key, err, out)
	}
	genDirs[key] = dir
	return dir
}

// RemoveGenerated deletes the models GenModel wrote (a package's TestMain
// calls it after m.Run).
func RemoveGenerated() {
	genMu.Lock()
	defer genMu.Unlock()
	for key, dir := range genDirs {
		os.RemoveAll(filepath.Dir(dir))
		delete(genDirs, key)
	}
}

// Main is a TestMain for packages whose tests call GenModel: it runs the
// tests, deletes the generated models (RemoveGenerated) and exits with the
// tests' status.
func Main(m *testing.M) {
	code := m.Run()
	RemoveGenerated()
	os.Exit(code)
}

// RunReference runs a generator's numpy reference ("reference --model DIR",
// req as JSON on stdin) and decodes its JSON reply into resp.
func RunReference(tb testing.TB, script, dir string, req, resp any) {
	tb.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(Python, filepath.Join(RepoRoot(tb), "scripts", script), "reference", "--model", dir)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s reference: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(out, resp); err != nil {
		tb.Fatalf("%s reference reply: %v", script, err)
	}
}

// Model generates (once per test binary) the gen_bert.py preset ("tiny" or
// "minilm") with seed 1 and returns its directory. The directory lives in
// the OS temp dir and is shared by the tests of one package run.
func Model(tb testing.TB, preset string) string {
	tb.Helper()
	tok := filepath.Join(RepoRoot(tb), ".cache", "tokenizers", "bert-uncased.json")
	if _, err := os.Stat(tok); err != nil {
		RequireNative(tb, "BERT tokenizer "+tok)
	}
	return GenModel(tb, preset, "gen_bert.py", "--preset", preset, "--seed", "1", "--tokenizer", tok)
}

// DataDir is the shared dataset directory ($RLSEARCH_DATA or ../shared/data
// beside the repository); tb is skipped when it does not exist.
func DataDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("RLSEARCH_DATA")
	if dir == "" {
		dir = filepath.Join(RepoRoot(tb), "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "wiki_multihop", "corpus.jsonl")); err != nil {
		tb.Skipf("shared data not found in %s", dir)
	}
	return dir
}

// ReadFloat32s reads a file of raw little-endian float32 values (as numpy's
// tofile writes them on x86-64), failing tb on an I/O error.
func ReadFloat32s(tb testing.TB, path string) []float32 {
	tb.Helper()
	return readLittleEndian[float32](tb, path)
}

// readLittleEndian reads path as whole little-endian values of T (a trailing
// partial value is ignored), failing tb on an I/O error.
func readLittleEndian[T float32 | int64](tb testing.TB, path string) []T {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var zero T
	v := make([]T, len(b)/binary.Size(zero))
	if _, err := binary.Decode(b, binary.LittleEndian, v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// RequireFaiss skips tb (or fails it under RLSEARCH_REQUIRE_NATIVE=1) when
// Debian's python3-faiss and numpy are not importable by Python.
func RequireFaiss(tb testing.TB) {
	tb.Helper()
	if err := exec.Command(Python, "-c", "import faiss, numpy").Run(); err != nil {
		RequireNative(tb, "python3-faiss/python3-numpy importable by "+Python)
	}
}

// RunPython runs script with Python in dir on threads BLAS threads,
// failing tb with the script's output when it fails.
func RunPython(tb testing.TB, dir string, threads int, script string) {
	tb.Helper()
	cmd := exec.Command(Python, "-c", script)
	cmd.Dir = dir
	n := strconv.Itoa(threads)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+n, "OPENBLAS_NUM_THREADS="+n)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("python: %v\n%s", err, out)
	}
}

// ReadInt64s reads a file of little-endian int64 values (numpy
// .astype('<i8').tofile, such as faiss's search labels).
func ReadInt64s(tb testing.TB, path string) []int64 {
	tb.Helper()
	return readLittleEndian[int64](tb, path)
}

// LabelRows cuts a row-major [nq, k] label array (faiss's search output)
// into one list of rows per query, dropping faiss's -1 padding.
func LabelRows(ids []int64, k int) [][]int32 {
	out := make([][]int32, len(ids)/k)
	for i := range out {
		for _, id := range ids[i*k : (i+1)*k] {
			if id >= 0 {
				out[i] = append(out[i], int32(id))
			}
		}
	}
	return out
}

// Overlap is the mean, over queries, of the fraction of want[i]'s rows that
// got[i] holds (recall of got against want); queries with no want rows
// count 0.
func Overlap(got, want [][]int32) float64 {
	s := 0.0
	for i := range want {
		if len(want[i]) == 0 {
			continue
		}
		f := 0
		for _, r := range got[i] {
			if slices.Contains(want[i], r) {
				f++
			}
		}
		s += float64(f) / float64(len(want[i]))
	}
	return s / float64(max(1, len(want)))
}

// WikiQuestion is one question of ../shared/data/wiki_multihop/questions.jsonl.
type WikiQuestion struct {
	ID             string   `json:"id"`
	Question       string   `json:"question"`
	GoldenAnswers  []string `json:"golden_answers"`
	GoldPassageIDs []string `json:"gold_passage_ids"`
}

// WikiQuestions reads the 763 wiki_multihop questions.
func WikiQuestions(tb testing.TB) []WikiQuestion {
	tb.Helper()
	f, err := os.Open(filepath.Join(DataDir(tb), "wiki_multihop", "questions.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var qs []WikiQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q WikiQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatalf("questions.jsonl line %d: %v", len(qs)+1, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return qs
}

// JSONLines decodes each line of out (JSON Lines, surrounding white space
// trimmed) into a map, failing tb on a line that is not a JSON object.
func JSONLines(tb testing.TB, out string) []map[string]any {
	tb.Helper()
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			tb.Fatalf("output line %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// Cosine is the cosine similarity of a and b, same length, accumulated in
// float64 (NaN when either is all zeros).
func Cosine[A, B float32 | float64](a []A, b []B) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// LogSink collects the lines of a Logf-style callback (Config.Logf of
// embed and rerank). Safe for concurrent use.
type LogSink struct {
	mu    sync.Mutex
	lines []string
}

// Logf records one line.
func (l *LogSink) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// Lines returns the lines so far.
func (l *LogSink) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}
