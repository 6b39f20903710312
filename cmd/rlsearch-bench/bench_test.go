package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/bench/indexbench"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdtest"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, run, args...)
}

func buildIndex(t *testing.T) (dir, questions string) { return cmdtest.BuildIndex(t) }

func TestCycle(t *testing.T) {
	got := strings.Join(indexbench.Cycle([]string{"a", "b", "c"}, 7), "")
	if got != "abcabca" {
		t.Errorf("cycle = %q, want abcabca", got)
	}
}

// TestBenchBM25Mode checks the parts of `index --mode bm25` that
// scripts/bench-scale.sh reads: the TREC run file and the JSON keys.
func TestBenchBM25Mode(t *testing.T) {
	dir, questions := buildIndex(t)
	tmp := t.TempDir()
	runFile, jsonFile := filepath.Join(tmp, "ours.run"), filepath.Join(tmp, "m.json")
	code, out, errs := runCmd(t, "index", "--mode", "bm25", "--index", dir, "--questions", questions,
		"--duration", "1ms", "--batch", "5", "--k", "2", "--run-out", runFile, "--json", jsonFile)
	if code != 0 {
		t.Fatalf("index: code %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "/retrieve") {
		t.Errorf("--mode bm25 should not measure HTTP:\n%s", out)
	}
	raw, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) < 2 {
		t.Fatalf("run file has %d lines, want at least one hit per question:\n%s", len(lines), raw)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 6 || f[1] != "Q0" || f[5] != "rlsearch" {
			t.Errorf("run line %q: want qid Q0 docid rank score rlsearch", l)
		}
	}
	// q1 asks for the capital of Germany (p2); q2 for the highest mountain (p3).
	if !strings.HasPrefix(lines[0], "q1 Q0 p2 1 ") || !strings.Contains(string(raw), "q2 Q0 p3 1 ") {
		t.Errorf("run file should rank p2 first for q1 and p3 first for q2:\n%s", raw)
	}
	var m map[string]any
	if raw, err = os.ReadFile(jsonFile); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("--json output is not a JSON object: %v\n%s", err, raw)
	}
	for _, key := range []string{"open_ms", "bm25_batch1_qps", "bm25_batchN_qps", "peak_rss_mib", "build_passages_per_s"} {
		if v, ok := m[key].(float64); !ok || v <= 0 {
			t.Errorf("json %q = %v, want a positive number", key, m[key])
		}
	}
	if m["batch"] != 5.0 || m["mode"] != "bm25" || m["passages"] != 3.0 {
		t.Errorf("json batch/mode/passages = %v/%v/%v, want 5/bm25/3", m["batch"], m["mode"], m["passages"])
	}
}

func TestBenchBadFlags(t *testing.T) {
	dir, questions := buildIndex(t)
	for _, args := range [][]string{
		{"--mode", "dense"},
		{"--batch", "-1"},
		{"--k", "0"},
		{"--concurrency", "0"},
		{"--duration", "0s"},
	} {
		code, _, errs := runCmd(t, append([]string{"index", "--index", dir, "--questions", questions}, args...)...)
		if code != 2 || !strings.Contains(errs, args[0]+" ") {
			t.Errorf("index %v: code %d, want 2 and a message naming the flag; stderr:\n%s", args, code, errs)
		}
	}
}

// TestBenchSuitesAndCompare runs `run --suites rewards,gpu` tiny, then
// compares the report with itself and renders it again.
func TestBenchSuitesAndCompare(t *testing.T) {
	data := testutil.DataDir(t)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	code, stdout, errs := runCmd(t, "run", "--suites", "rewards,gpu", "--quick", "--reps", "2", "--min-time", "1ms",
		"--data", data, "--work", filepath.Join(tmp, "work"), "--set", "rewards.batch=4", "--out", out)
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, stdout, errs)
	}
	if !strings.Contains(errs, "rewards rep 2/2") || !strings.Contains(stdout, "wrote report.json, report.md") {
		t.Errorf("progress or summary missing:\nstdout %s\nstderr %s", stdout, errs)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "reward=qa") || !strings.Contains(string(md), "## gpu") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
	rep := filepath.Join(out, "report.json")
	code, stdout, errs = runCmd(t, "compare", rep, rep)
	if code != 0 || !strings.Contains(stdout, "batch=4 reward=qa") || !strings.Contains(stdout, " ~ ") {
		t.Errorf("compare: code %d\n%s\n%s", code, stdout, errs)
	}
	re := filepath.Join(tmp, "re")
	if code, stdout, errs = runCmd(t, "render", rep, "--out", re); code != 0 {
		t.Errorf("render: code %d\n%s\n%s", code, stdout, errs)
	} else if b, err := os.ReadFile(filepath.Join(re, "report.md")); err != nil || !strings.Contains(string(b), "reward=qa") {
		t.Errorf("rendered report.md: %v\n%s", err, b)
	}
	for _, bad := range [][]string{
		{"render", rep},
		{"run", "--suites", "nope", "--data", data, "--out", out},
		{"run", "--set", "novalue", "--out", out},
		{"compare", rep},
	} {
		if code, _, _ := runCmd(t, bad...); code == 0 {
			t.Errorf("%q: code 0, want an error", bad)
		}
	}
}
