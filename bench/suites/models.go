package suites

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/corpus"
)

// python is Debian's interpreter with python3-onnx and python3-numpy, which
// the test-model generators need (see /work/shared/SETUP-NOTES.md).
const python = "/usr/bin/python3"

// ortLib is the ONNX Runtime library: "<suite>.ort", else $ONNXRUNTIME_LIB,
// else scripts/setup.sh's .cache/ort/libonnxruntime.so.1 (relative to the
// Options.Root). Missing: a skip error.
func ortLib(env *bench.Env, suite string) (string, error) {
	lib := env.Get(suite, "ort", os.Getenv("ONNXRUNTIME_LIB"))
	if lib == "" {
		lib = env.Path(".cache", "ort", "libonnxruntime.so.1")
	}
	if _, err := os.Stat(lib); err != nil {
		return "", skipf("ONNX Runtime library %s not found (run scripts/setup.sh, or set ONNXRUNTIME_LIB)", lib)
	}
	return filepath.Abs(lib)
}

// testModel returns the model directory of a suite: "<suite>.model" when
// set (it must exist), else the generated test model `make testmodel`
// writes (.cache/models/<name>), else one generated now into env.Work/models
// with the project's generator (scripts/gen_bert.py or gen_qwen3.py, seed
// 1: seeded random weights of the real architecture, not a trained model).
// Without the generator's dependencies it returns a skip error.
func testModel(env *bench.Env, suite, name, script string, args ...string) (string, error) {
	if m := env.Get(suite, "model", ""); m != "" {
		if _, err := os.Stat(filepath.Join(m, "model.onnx")); err != nil {
			return "", fmt.Errorf("%w: %s.model=%s: no model.onnx there", errConfig, suite, m)
		}
		return m, nil
	}
	for _, d := range []string{env.Path(".cache", "models", name), filepath.Join(env.Work, "models", name)} {
		if _, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
			return d, nil
		}
	}
	gen := env.Path("scripts", script)
	if _, err := os.Stat(gen); err != nil {
		return "", skipf("no model (set %s.model=DIR; generator %s not found: run from the repository root)", suite, gen)
	}
	if err := exec.Command(python, "-c", "import onnx, numpy").Run(); err != nil {
		return "", skipf("no model (set %s.model=DIR) and %s lacks python3-onnx/python3-numpy to generate the test model", suite, python)
	}
	dir, err := workDir(env, "models")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	fmt.Fprintf(env.Log, "generating the %s test model (%s, seeded random weights) into %s\n", name, script, out)
	cmd := exec.Command(python, append([]string{gen, "gen", "--seed", "1", "--out", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("suites: %s: %v\n%s", script, err, b)
	}
	return out, nil
}

// tokenizer returns .cache/tokenizers/<name> under the root, or a skip error.
func tokenizer(env *bench.Env, name string) (string, error) {
	p := env.Path(".cache", "tokenizers", name)
	if _, err := os.Stat(p); err != nil {
		return "", skipf("tokenizer %s not found (run scripts/setup.sh)", p)
	}
	return p, nil
}

// loadPassages reads the first n passages of a Search-R1 corpus JSONL
// through the corpus reader ({"id", "contents"} or {"id", "title",
// "text"}; empty passages skipped).
func loadPassages(path string, n int) ([]rlsearch.Document, error) {
	r, err := corpus.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []rlsearch.Document
	for len(out) < n {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("suites: %s: %w", path, err)
		}
		out = append(out, p.Document)
	}
	return out, nil
}
