package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdtest"
)

// corpusText and questionsText are the toy corpus and its questions.
const (
	corpusText    = cmdtest.CorpusText
	questionsText = cmdtest.QuestionsText
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func buildIndex(t *testing.T) (dir, questions string) {
	t.Helper()
	tmp := t.TempDir()
	corpus := filepath.Join(tmp, "corpus.jsonl")
	questions = filepath.Join(tmp, "q.jsonl")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	os.WriteFile(questions, []byte(questionsText), 0o644)
	dir = filepath.Join(tmp, "idx")
	if code, out, errs := runCmd(t, "index", "--corpus", corpus, "--out", dir, "--quiet"); code != 0 || !strings.Contains(out, "indexed 3 passages") {
		t.Fatalf("index: code %d\n%s\n%s", code, out, errs)
	}
	return dir, questions
}

func TestIndexSearch(t *testing.T) {
	dir, questions := buildIndex(t)
	code, out, errs := runCmd(t, "search", "--index", dir, "capital of Germany", "-k", "2")
	if code != 0 || !strings.Contains(out, "Q: capital of Germany") || !strings.Contains(out, " 1.") || !strings.Contains(out, "Berlin  [p2]") {
		t.Fatalf("search: code %d\n%s\n%s", code, out, errs)
	}
	if strings.Index(out, "Berlin") > strings.Index(out, "Paris") {
		t.Errorf("Berlin should rank above Paris:\n%s", out)
	}
	code, out, errs = runCmd(t, "search", "--index", dir, "--questions", questions, "-k", "1")
	if code != 0 || !strings.Contains(out, "* 1.") {
		t.Fatalf("search --questions should mark the gold passage: code %d\n%s\n%s", code, out, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	dir, _ := buildIndex(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: rlsearch"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"index", "--out", "x"}, 2, "--corpus and --out are required"},
		{[]string{"index", "--corpus", "/nonexistent.jsonl", "--out", filepath.Join(t.TempDir(), "i")}, 1, "/nonexistent.jsonl"},
		{[]string{"index", "--corpus", "c", "--out", "o", "--dtype", "int4"}, 2, `unknown dtype "int4"`},
		{[]string{"search", "--index", dir}, 2, "no question given"},
		{[]string{"search", "--index", dir, "-k", "0", "q"}, 2, "-k must be positive"},
		{[]string{"search", "--index", dir, "--retriever", "e5", "q"}, 2, `retriever "e5" is not available`},
		{[]string{"search", "q"}, 2, "--index is required"},
		{[]string{"search", "--index", t.TempDir(), "q"}, 1, "not an index directory"},
		{[]string{"search", "--index", dir, "--server", "http://127.0.0.1:1", "q"}, 2, "not both"},
		{[]string{"serve", "--index", dir, "--retriever", "e5"}, 2, `--retriever "e5" is not served`},
		{[]string{"serve", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"serve", "--index", dir, "--program-max-memory", "-1"}, 2, "--program-max-memory -1 MiB is out of range"},
		{[]string{"serve"}, 2, "serve needs --index DIR"},
		{[]string{"serve", "--index", dir, "--index", dir}, 2, "several --index need names (NAME=DIR)"},
		{[]string{"serve", "--index", "a=" + dir, "--index", "a=" + dir}, 2, `corpus "a" given twice`},
		{[]string{"serve", "--index", dir, "--listen", "127.0.0.1"}, 2, "want HOST:PORT[=PROFILE][@CORPUS]"},
		{[]string{"serve", "--index", dir, "--listen", "127.0.0.1:0=skyrl"}, 2, `unknown profile "skyrl"`},
		{[]string{"serve", "--index", "wiki=" + dir, "--listen", "127.0.0.1:0=browsecomp@musique"}, 2, `no --index names corpus "musique"`},
		{[]string{"serve", "--index", "a b=" + dir}, 2, "corpus name"},
		{[]string{"serve", "--shards", "http://127.0.0.1:1", "--index", dir}, 2, "--shards (router mode) and --index exclude each other"},
		{[]string{"serve", "--shards", "127.0.0.1:1"}, 2, "want http://host:port"},
		{[]string{"serve", "--shards", "http://127.0.0.1:1", "--on-missing-shard", "ignore"}, 2, "--on-missing-shard"},
		{[]string{"serve", "--shards", "http://127.0.0.1:1", "--hedge-after", "soon"}, 2, "--hedge-after"},
		{[]string{"serve", "--shards", "http://127.0.0.1:1", "--shard-start-timeout", "100ms"}, 1, "no shard server answered"},
		{[]string{"index", "--corpus", "c", "--out", "o", "--shards", "2", "--shard", "x"}, 2, `bad shard "x"`},
		{[]string{"index", "--corpus", "c", "--out", "o", "--shard", "1"}, 1, "needs BuildConfig.Shards"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want code %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestMovedCommands: the spellings of the commands that moved to
// rlsearch-bench exit 2 with one line naming the new command and keeping
// the arguments.
func TestMovedCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "`rlsearch-bench run`"},
		{[]string{"bench", "--suites", "bm25", "--quick"}, "`rlsearch-bench run --suites bm25 --quick`"},
		{[]string{"bench", "compare", "a.json", "b.json"}, "`rlsearch-bench compare a.json b.json`"},
		{[]string{"bench", "render", "a.json", "--out", "o"}, "`rlsearch-bench render a.json --out o`"},
		{[]string{"bench", "--mode", "bm25", "--index", "idx"}, "`rlsearch-bench index --mode bm25 --index idx`"},
		{[]string{"bench", "--index=idx"}, "`rlsearch-bench index --index=idx`"},
		{[]string{"eval", "--index", "idx"}, "`rlsearch-bench eval --index idx`"},
		{[]string{"gencorpus", "--n", "5", "--out", "x"}, "`rlsearch-bench gencorpus --n 5 --out x`"},
		{[]string{"corpusstats", "a.jsonl"}, "`rlsearch-bench corpusstats a.jsonl`"},
		{[]string{"hybrid", "gen", "--collection", "c"}, "`rlsearch-bench hybrid-gen --collection c`"},
		{[]string{"hybrid", "eval", "--collection", "c", "--instances", "i"}, "`rlsearch-bench hybrid-eval --collection c --instances i`"},
		{[]string{"mutate", "--index", "idx", "--eval", "--datasets", "toy"}, "`rlsearch-bench mutate-eval --index idx --datasets toy`"},
		{[]string{"mutate", "--eval=true"}, "`rlsearch-bench mutate-eval`"},
	} {
		code, stdout, errs := runCmd(t, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(errs, "moved to the benchmark binary: run "+tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: code %d, stderr %q; want code 2 and one line naming %s", tc.args, code, errs, tc.want)
		}
	}
	// Not moved: hybrid build/exec, mutate without --eval.
	for _, args := range [][]string{{"hybrid", "build"}, {"mutate", "--eval=false", "--bogus"}} {
		if _, _, errs := runCmd(t, args...); strings.Contains(errs, "moved") {
			t.Errorf("%q: %q, want the command's own error", args, errs)
		}
	}
}

// TestServe starts `serve` on a free port, sends Search-R1 requests, and
// checks that cancelling the context shuts it down cleanly.
func TestServe(t *testing.T) {
	dir, _ := buildIndex(t)
	base, stop := startServe(t, "--index", dir, "--addr", "127.0.0.1:0")

	resp, err := http.Post(base+"/retrieve", "application/json", strings.NewReader(`{"queries": ["capital of Germany", "  "], "topk": 10, "return_scores": true}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result [][]struct {
			Document struct{ ID, Contents string }
			Score    float64
		}
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(got.Result) != 2 || len(got.Result[0]) == 0 || got.Result[0][0].Document.ID != "p2" || len(got.Result[1]) != 0 {
		t.Fatalf("status %d, result %+v", resp.StatusCode, got)
	}
	if len(got.Result[0]) > 3 {
		t.Errorf("topk 10 on 3 passages returned %d hits", len(got.Result[0]))
	}
	resp, err = http.Post(base+"/retrieve", "application/json", strings.NewReader(`{"queries": "not a list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"field":"queries"`) {
		t.Errorf("bad queries: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"num_docs":3`) || !strings.Contains(string(body), `"backend":"cpu"`) {
		t.Errorf("healthz: %s", body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited with %d after cancel", code)
	}
}

// startServe runs `serve args...` until stop, which cancels it and returns
// its exit code (failing t when it has not shut down within 10 s); base is
// the URL of its first "listening on" line.
func startServe(t *testing.T, args ...string) (base string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not shut down")
			return -1
		}
	}
}
