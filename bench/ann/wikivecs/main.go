// Command wikivecs writes the passage and question embeddings of an index
// as TEXMEX .fvecs files, so that bench/ann/compare.py can measure HNSW and
// faiss on the vectors the main job really serves:
//
//	wikivecs --index out/wiki-tiny --model .cache/models/tiny \
//	    --questions ../shared/data/wiki_multihop/questions.jsonl --out DIR
//
// DIR/base.fvecs holds the index's vector file (row order, widened to
// float32); DIR/query.fvecs the questions embedded with the E5 "query: "
// prefix by the same model. Each row: int32 dimension, then the values,
// little-endian.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

func main() {
	idx := flag.String("index", "", "index directory with a vector file")
	model := flag.String("model", "", "the model the shard was built with")
	questions := flag.String("questions", "", "question set JSONL")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if err := run(*idx, *model, *questions, *out); err != nil {
		fmt.Fprintln(os.Stderr, "wikivecs:", err)
		os.Exit(1)
	}
}

func run(idx, model, questions, out string) error {
	if idx == "" || model == "" || questions == "" || out == "" {
		return fmt.Errorf("--index, --model, --questions and --out are required")
	}
	flat, err := ann.ReadVectorFile(filepath.Join(idx, index.DenseFile))
	if err != nil {
		return err
	}
	enc, err := embed.Open(embed.Config{Dir: model})
	if err != nil {
		return err
	}
	defer enc.Close()
	if enc.Dim() != flat.Dim() {
		return fmt.Errorf("model dim %d, shard dim %d", enc.Dim(), flat.Dim())
	}
	qs, err := bench.LoadQuestions(questions)
	if err != nil {
		return err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	qv, err := enc.EncodeQueries(context.Background(), texts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	d := flat.Dim()
	base := make([]float32, 0, flat.Len()*d)
	for r := 0; r < flat.Len(); r++ {
		base = append(base, flat.Vector(r)...)
	}
	if err := writeFvecs(filepath.Join(out, "base.fvecs"), base, d); err != nil {
		return err
	}
	return writeFvecs(filepath.Join(out, "query.fvecs"), qv, d)
}

// writeFvecs writes rows of dim d atomically (temp file + rename).
func writeFvecs(path string, v []float32, d int) error {
	return atomicfile.WriteFile(path, 0o644, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		var b [4]byte
		for i := 0; i < len(v); i += d {
			binary.LittleEndian.PutUint32(b[:], uint32(d))
			w.Write(b[:])
			for _, x := range v[i : i+d] {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				w.Write(b[:])
			}
		}
		return w.Flush()
	})
}
