package rerank

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

var (
	genMu   sync.Mutex
	genDirs = map[string]string{}
)

// TestMain removes the generated models after the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	genMu.Lock()
	for _, dir := range genDirs {
		os.RemoveAll(filepath.Dir(dir))
	}
	genMu.Unlock()
	os.Exit(code)
}

// genModel runs a generator script once per test binary and argument list
// and returns the model directory (in the OS temp dir).
func genModel(tb testing.TB, script string, args ...string) string {
	tb.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	key := script + " " + strings.Join(args, " ")
	if dir, ok := genDirs[key]; ok {
		return dir
	}
	root := testutil.RepoRoot(tb)
	if err := exec.Command(testutil.Python, "-c", "import onnx, numpy").Run(); err != nil {
		testutil.RequireNative(tb, "python3-onnx and python3-numpy for "+testutil.Python)
	}
	base, err := os.MkdirTemp("", "rlsearch-rerank-model-")
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(base, "model")
	cmd := exec.Command(testutil.Python, append([]string{filepath.Join(root, "scripts", script), "gen", "--out", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", key, err, out)
	}
	genDirs[key] = dir
	return dir
}

// qwen3Model generates the tiny Qwen3 model of a variant ("full" or "last").
func qwen3Model(tb testing.TB, variant string) string {
	tb.Helper()
	tok := qwen3TokenizerPath(tb)
	return genModel(tb, "gen_qwen3.py", "--variant", variant, "--seed", "1", "--tokenizer", tok)
}

// runReference runs a generator's numpy reference with a JSON request.
func runReference(tb testing.TB, script, dir string, req any, resp any) {
	tb.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(testutil.Python, filepath.Join(testutil.RepoRoot(tb), "scripts", script), "reference", "--model", dir)
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
