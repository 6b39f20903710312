package hybrid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestCompressedInputs (issue 25, item 1): the data file and an image
// field's vectors file may be .jsonl.zst, also when the zstd stream starts
// with a skippable frame (pzstd writes one); the collection equals the
// one built from the plain files.
func TestCompressedInputs(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile(filepath.Join(testutil.DataDir(t), dataFiles["amazon_toys"]))
	if err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer // the first 40 products
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	var ids []string
	for len(ids) < 40 && sc.Scan() {
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
		data.Write(sc.Bytes())
		data.WriteByte('\n')
	}
	var vecs bytes.Buffer
	for i, id := range ids {
		json.NewEncoder(&vecs).Encode(map[string]any{"id": id, "vector": []float32{float32(i), 1, -1}})
	}
	skip := testutil.IssueSkippableFrame
	tmp := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	build := func(name, dataFile, vecFile string) *Collection {
		s := amazonSchema(t)
		s.Image = []ImageField{{Name: "image"}}
		dir := filepath.Join(tmp, name)
		if _, err := Build(ctx, BuildConfig{Schema: s, Data: dataFile, Dir: dir, ImageVectors: map[string]string{"image": vecFile}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, err := Open(ctx, dir, OpenConfig{K: 5})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	plain := build("plain", write("d.jsonl", data.Bytes()), write("v.jsonl", vecs.Bytes()))
	zst := build("zstd", write("d.jsonl.zst", append(append([]byte{}, skip...), testutil.ZstdFrames(data.String())...)),
		write("v.jsonl.zst", append(append([]byte{}, skip...), testutil.ZstdFrames(vecs.String())...)))
	if plain.Len() != 40 || zst.Len() != plain.Len() {
		t.Fatalf("rows: plain %d, zstd %d, want 40 each", plain.Len(), zst.Len())
	}
	prog := Program{SQL: "WHERE product_id IN <image_0>", RetrievalList: []Retrieval{{Type: "image", Field: "image", Query: "q", Vector: []float32{30, 1, -1}}}}
	a, err := plain.Execute(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	b, err := zst.Execute(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.IDs) == 0 || len(a.IDs) != len(b.IDs) {
		t.Fatalf("image retrieval: plain %v, zstd %v", a.IDs, b.IDs)
	}
	for i := range a.IDs {
		if a.IDs[i] != b.IDs[i] {
			t.Fatalf("image retrieval differs at %d: plain %v, zstd %v", i, a.IDs, b.IDs)
		}
	}
}
