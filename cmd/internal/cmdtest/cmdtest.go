// Package cmdtest holds the fixtures and helpers of the tests of the two
// binaries (cmd/rlsearch, cmd/rlsearch-bench): a toy corpus and question
// set, an index of them, a toy hybrid table, and a runner of a binary's
// main. Test code only; not safe for concurrent use across tests that
// share a directory.
package cmdtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/index"
)

// CorpusText is a toy corpus of three passages in both line shapes.
const CorpusText = `{"id": "p1", "contents": "\"Paris\"\nParis is the capital and largest city of France."}
{"id": "p2", "title": "Berlin", "text": "Berlin is the capital of Germany and its largest city."}
{"id": "p3", "title": "Mount Everest", "text": "Mount Everest is Earth's highest mountain above sea level."}
`

// QuestionsText is a question set over CorpusText (dataset "toy").
const QuestionsText = `{"id": "q1", "question": "What is the capital of Germany?", "dataset": "toy", "gold_passage_ids": ["p2"]}
{"id": "q2", "question": "highest mountain on Earth", "dataset": "toy", "gold_passage_ids": ["p3"]}
`

// Main is a binary's run function: arguments to exit code.
type Main func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Run runs main with args and returns its exit code, stdout and stderr.
func Run(t testing.TB, main Main, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// Files writes CorpusText and QuestionsText into a new temporary
// directory and returns their paths.
func Files(t testing.TB) (corpus, questions string) {
	t.Helper()
	tmp := t.TempDir()
	corpus, questions = filepath.Join(tmp, "corpus.jsonl"), filepath.Join(tmp, "q.jsonl")
	if err := os.WriteFile(corpus, []byte(CorpusText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(questions, []byte(QuestionsText), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus, questions
}

// BuildIndex builds a BM25 index of CorpusText with index.Build (the
// serving binary's tests build theirs with `rlsearch index`) and returns
// its directory and the path of QuestionsText.
func BuildIndex(t testing.TB) (dir, questions string) {
	t.Helper()
	corpus, questions := Files(t)
	dir = filepath.Join(filepath.Dir(corpus), "idx")
	meta, err := index.Build(context.Background(), index.BuildConfig{Corpus: corpus, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s := meta.Summary(dir); !strings.Contains(s, "indexed 3 passages") {
		t.Fatalf("index of the toy corpus: %s", s)
	}
	return dir, questions
}

// HybridSchema is the schema of the toy hybrid table of WriteToys.
const HybridSchema = `{"name": "toys", "id": "product_id", "columns": [
  {"name": "brand", "type": "TEXT", "role": "categorical"},
  {"name": "price", "type": "REAL", "role": "numeric"}],
 "text": [{"name": "title"}]}`

// WriteToys writes HybridSchema and 60 rows of toys (brand, price,
// title) and returns their paths.
func WriteToys(t testing.TB) (schema, data string) {
	t.Helper()
	tmp := t.TempDir()
	schema, data = filepath.Join(tmp, "schema.json"), filepath.Join(tmp, "toys.jsonl")
	words := []string{"wooden", "train", "puzzle", "doll", "robot", "castle", "racing", "car", "dragon", "kite"}
	var b bytes.Buffer
	for i := range 60 {
		fmt.Fprintf(&b, `{"id": "p%d", "brand": "%s", "price": %d.5, "title": "%s %s %s"}`+"\n", i,
			[]string{"Acme", "Brio", "Lego", "O'Toys"}[i%4], i, words[i%10], words[(i/3)%10], words[(i*7)%10])
	}
	if err := os.WriteFile(schema, []byte(HybridSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return schema, data
}
