package hybrideval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/hybrid"
)

func TestWriteScores(t *testing.T) {
	r := &Result{
		Instances: []hybrid.Instance{{ID: "a", Level: "L1", Modality: "text"}, {ID: "b", Level: "L3", Modality: "hybrid"}},
		Scores:    []hybrid.Scores{{Executed: true, Hit1: 1}, {}},
	}
	var stdout bytes.Buffer
	if err := r.WriteScores("", &stdout); err != nil || stdout.Len() != 0 {
		t.Fatalf(`path "": err %v, wrote %q; want nothing written`, err, stdout.String())
	}
	if err := r.WriteScores("-", &stdout); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "scores.jsonl")
	if err := r.WriteScores(path, nil); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(file)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":"a","level":"L1","modality":"text","scores":{"Executed":true,"Hit1":1`) || !strings.HasPrefix(lines[1], `{"id":"b","level":"L3"`) {
		t.Errorf("scores file, one line per instance in order:\n%s", file)
	}
	if stdout.String() != string(file) {
		t.Errorf(`"-" wrote %q to stdout, want the file's bytes %q`, stdout.String(), file)
	}
}
