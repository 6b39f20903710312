package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestE5Field: a text field indexed with the generated tiny BERT (E5
// path) on a 150-row subset; the entry's candidates equal a brute-force
// inner-product top-K over the same encoder's passage vectors.
func TestE5Field(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(testutil.DataDir(t), dataFiles["amazon_toys"])
	model := testutil.Model(t, "tiny")
	enc, err := embed.Open(embed.Config{Dir: model, ORTLib: testutil.ORTLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	s := amazonSchema(t)
	s.Text[0].Index = IndexE5
	s.Text = s.Text[:1]
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := Build(ctx, BuildConfig{Schema: s, Data: data, Dir: dir, Encoder: enc, Limit: 150}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir, OpenConfig{}); err == nil {
		t.Fatal("Open without the encoder of an e5 field succeeded")
	}
	c, err := Open(ctx, dir, OpenConfig{Encoder: enc, K: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Execute(ctx, Program{SQL: "WHERE product_id IN <text_0>", RetrievalList: []Retrieval{txt("title", "steam train set")}})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for r := range int32(c.Len()) {
		titles = append(titles, c.Text("title", r))
	}
	pv, err := enc.EncodePassages(ctx, titles)
	if err != nil {
		t.Fatal(err)
	}
	qv, _ := enc.EncodeQueries(ctx, []string{"steam train set"})
	d := enc.Dim()
	type sc struct {
		row int32
		s   float32
	}
	var all []sc
	for r := range c.Len() {
		var dot float32
		for j := range d {
			dot += qv[j] * pv[r*d+j]
		}
		all = append(all, sc{int32(r), dot})
	}
	slices.SortFunc(all, func(a, b sc) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return int(a.row - b.row)
	})
	want := map[int32]bool{}
	for _, x := range all[:7] {
		want[x.row] = true
	}
	if res.Total != 7 {
		t.Fatalf("total %d, want K = 7", res.Total)
	}
	// fp16 storage may swap near-ties at the boundary: allow one.
	miss := 0
	for _, r := range res.Rows {
		if !want[r] {
			miss++
		}
	}
	if miss > 1 {
		t.Fatalf("%d of 7 candidates differ from brute force", miss)
	}
}

// TestImageField: user-supplied image vectors; an entry with a vector
// retrieves its nearest rows; an entry without one fails with a 4xx-class
// error when no image encoder is configured.
func TestImageField(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(testutil.DataDir(t), dataFiles["amazon_toys"])
	s := amazonSchema(t)
	s.Image = []ImageField{{Name: "image"}}
	tmp := t.TempDir()
	vf := filepath.Join(tmp, "vec.jsonl")
	f, _ := os.Create(vf)
	rows, err := readRows(s, data, 200)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := map[string][]float32{}
	enc := json.NewEncoder(f)
	for i, r := range rows {
		if i%3 == 0 {
			continue // rows without an image
		}
		v := []float32{rng.Float32(), rng.Float32(), rng.Float32()}
		vecs[r.id] = v
		enc.Encode(map[string]any{"id": r.id, "vector": v})
	}
	f.Close()
	dir := filepath.Join(tmp, "c")
	if _, err := Build(ctx, BuildConfig{Schema: s, Data: data, Dir: dir, Limit: 200, ImageVectors: map[string]string{"image": vf}}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, dir, OpenConfig{K: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := []float32{1, 0.5, 0.25}
	res, err := c.Execute(ctx, Program{SQL: "WHERE product_id IN <image_0>", RetrievalList: []Retrieval{{Type: "image", Field: "image", Query: "red car", Vector: q}}})
	if err != nil {
		t.Fatal(err)
	}
	type sc struct {
		id string
		s  float32
	}
	var all []sc
	for id, v := range vecs {
		all = append(all, sc{id, q[0]*v[0] + q[1]*v[1] + q[2]*v[2]})
	}
	slices.SortFunc(all, func(a, b sc) int {
		if a.s > b.s {
			return -1
		}
		if a.s < b.s {
			return 1
		}
		return 0
	})
	got := slices.Clone(res.IDs)
	var want []string
	for _, x := range all[:5] {
		want = append(want, x.id)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("image top-5 %v, want %v", got, want)
	}
	_, err = c.Execute(ctx, Program{SQL: "WHERE product_id IN <image_0>", RetrievalList: []Retrieval{{Type: "image", Field: "image", Query: "red car"}}})
	if !errors.Is(err, ErrNoQueryEncoder) || !errors.Is(err, rlsearch.ErrBadInput) {
		t.Fatalf("image entry without vector or encoder: %v", err)
	}
	_, err = c.Execute(ctx, Program{SQL: "WHERE product_id IN <image_0>", RetrievalList: []Retrieval{{Type: "image", Field: "image", Vector: []float32{1, 2}}}})
	if !errors.Is(err, rlsearch.ErrBadInput) {
		t.Fatalf("wrong vector dimension: %v", err)
	}
}
