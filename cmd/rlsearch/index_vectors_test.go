package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexVectorsFlags builds an index from an .fvecs file through the CLI
// flags and checks the refusals that name flags.
func TestIndexVectorsFlags(t *testing.T) {
	tmp := t.TempDir()
	corpus := filepath.Join(tmp, "corpus.jsonl")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	var b []byte
	for i := 0; i < 3; i++ { // unit vectors e_i in 4-d
		b = binary.LittleEndian.AppendUint32(b, 4)
		for j := 0; j < 4; j++ {
			v := float32(0)
			if i == j {
				v = 1
			}
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	vecs := filepath.Join(tmp, "e5.fvecs")
	os.WriteFile(vecs, b, 0o644)
	dir := filepath.Join(tmp, "idx")
	code, out, errs := runCmd(t, "index", "--corpus", corpus, "--out", dir, "--quiet", "--vectors", vecs, "--vectors-encoder", "intfloat/e5-base-v2", "--dtype", "int8")
	if code != 0 || !strings.Contains(out, "indexed 3 passages") || !strings.Contains(out, "dense intfloat/e5-base-v2 4-d int8") {
		t.Fatalf("index --vectors: code %d\n%s\n%s", code, out, errs)
	}
	code, _, errs = runCmd(t, "index", "--corpus", corpus, "--out", filepath.Join(tmp, "idx2"), "--quiet", "--vectors", vecs)
	if code == 0 || !strings.Contains(errs, "--vectors-encoder") {
		t.Fatalf("index --vectors without an encoder name: code %d\n%s", code, errs)
	}
	code, _, errs = runCmd(t, "index", "--corpus", corpus, "--out", filepath.Join(tmp, "idx3"), "--quiet", "--dtype", "int8")
	if code == 0 || !strings.Contains(errs, "int8 only when importing") {
		t.Fatalf("--dtype int8 without --vectors: code %d\n%s", code, errs)
	}
}
