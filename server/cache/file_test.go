package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testFP = "id=0123456789abcdef build=b1 encoder=none dense=none reranker=none"

// filled returns a cache of build b1 holding queries at k 3 and 10.
func filled(t testing.TB, queries int) (*Cache, *fakeRetriever) {
	t.Helper()
	c, err := New(Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRetriever{name: "bm25"}
	r := c.Wrap(f, nil)
	for i := range queries {
		for _, k := range []int{3, 10} {
			if _, err := r.Retrieve(context.Background(), []string{fmt.Sprintf("query %d", i)}, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c, f
}

// TestSaveLoad: a saved cache loaded into a fresh cache of the same
// fingerprint answers every cached query without calling the retriever,
// with the lists the retriever gave; the LRU order survives.
func TestSaveLoad(t *testing.T) {
	c, _ := filled(t, 50)
	path := filepath.Join(t.TempDir(), "cache.rlsc")
	if err := c.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP})
	if err != nil {
		t.Fatal(err)
	}
	n, err := d.LoadFile(path, 1000)
	if err != nil || n != 100 {
		t.Fatalf("LoadFile: %d entries, %v; want 100", n, err)
	}
	if a, b := c.Stats(), d.Stats(); a.Entries != b.Entries || a.Bytes != b.Bytes {
		t.Fatalf("loaded %+v, saved %+v", b, a)
	}
	f := &fakeRetriever{name: "bm25"}
	r := d.Wrap(f, nil)
	for i := range 50 {
		q := []string{fmt.Sprintf("query %d", i)}
		got, err := r.Retrieve(context.Background(), q, 10)
		if err != nil || !reflect.DeepEqual(got, expected(q, 10)) {
			t.Fatalf("query %d: %v %v, want %v", i, got, err, expected(q, 10))
		}
	}
	if f.calls.Load() != 0 {
		t.Errorf("the retriever was called %d times after the load; want every answer from the file", f.calls.Load())
	}
	var a, b bytes.Buffer
	if err := c.Save(&a); err != nil {
		t.Fatal(err)
	}
	e, _ := New(Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP})
	if _, err := e.Load(bytes.NewReader(a.Bytes()), 1000); err != nil {
		t.Fatal(err)
	}
	if err := e.Save(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("save, load, save: the second file differs (LRU order or entries lost)")
	}
}

// TestLoadRefuses: a file of another fingerprint, a damaged file, rows out
// of range and a file of another build are refused with a message naming
// the cause, and nothing is added.
func TestLoadRefuses(t *testing.T) {
	c, _ := filled(t, 50)
	var buf bytes.Buffer
	if err := c.Save(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	big, _ := filled(t, 2000)
	var bigFile bytes.Buffer
	if err := big.Save(&bigFile); err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(file)
	damaged[len(damaged)/2] ^= 0x40
	for _, tc := range []struct {
		name  string
		cfg   Config
		data  []byte
		rows  int
		is    error
		words string
	}{
		{"other fingerprint", Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: "id=ffff build=b1"}, file, 1000, ErrFingerprint, "id=ffff"},
		{"damaged", Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP}, damaged, 1000, ErrFile, ""},
		{"rows out of range", Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP}, file, 10, ErrFile, "out of range"},
		{"other build", Config{MaxBytes: 1 << 20, BuildID: "b2", Fingerprint: testFP}, file, 1000, ErrFile, "not of this index build"},
		{"not a cache file", Config{MaxBytes: 1 << 20, BuildID: "b1", Fingerprint: testFP}, []byte("{}"), 1000, ErrFile, "RLSCACHE"},
		{"too large", Config{MaxBytes: 100, BuildID: "b1", Fingerprint: testFP}, bigFile.Bytes(), 1000, ErrFile, "decompress"},
	} {
		d, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Load(bytes.NewReader(tc.data), tc.rows)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %v; want %v naming %q", tc.name, err, tc.is, tc.words)
		}
		if d.Stats().Entries != 0 {
			t.Errorf("%s: %d entries added from a refused file", tc.name, d.Stats().Entries)
		}
	}
}

// FuzzCacheFile: decodeFile and the entry checks never panic, and a file
// they accept saves back to a file that decodes to the same entries.
func FuzzCacheFile(f *testing.F) {
	c, _ := filled(f, 50)
	var buf bytes.Buffer
	if err := c.Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(fileMagic))
	f.Add([]byte("RLSCACHE\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fp, entries, err := decodeFile(bytes.NewReader(data), 4<<20)
		if err != nil {
			if !errors.Is(err, ErrFile) {
				t.Fatalf("error %v does not wrap ErrFile", err)
			}
			return
		}
		d, err := New(Config{MaxBytes: 4 << 20, BuildID: "b1", Fingerprint: fp})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			_ = checkEntry(e, "b1\x00", 1000)
		}
		if _, err := d.Load(bytes.NewReader(data), 1000); err != nil {
			return
		}
		var out bytes.Buffer
		if err := d.Save(&out); err != nil {
			t.Fatal(err)
		}
		if _, again, err := decodeFile(bytes.NewReader(out.Bytes()), 4<<20); err != nil || len(again) > len(entries) {
			t.Fatalf("re-saved file: %d entries, %v; loaded %d", len(again), err, len(entries))
		}
	})
}
