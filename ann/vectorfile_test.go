package ann

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeVectorFile(t testing.TB, dir string, vecs []float32, dim int, h Header, ids []int64) string {
	t.Helper()
	path := filepath.Join(dir, "dense.shard")
	h.Dim, h.Normalized, h.EncoderID, h.ConfigHash = dim, true, "tiny", 42
	if h.DType == INT8 && h.Scale == nil {
		h.Scale, h.Offset = FitInt8(vecs, dim)
	}
	w, err := CreateVectorFile(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(vecs); i += 5 * dim { // several appends, not aligned with blocks
		hi := min(i+5*dim, len(vecs))
		var part []int64
		if ids != nil {
			part = ids[i/dim : hi/dim]
		}
		if err := w.AppendWithIDs(vecs[i:hi], part); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVectorFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, dt := range []DType{FP32, FP16, INT8} {
		for _, comp := range []struct{ zstd, shuffle bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, n := range []int{0, 1, 7, 8, 23} {
				for _, withIDs := range []bool{false, true} {
					name := fmt.Sprintf("%v/zstd=%v/shuffle=%v/n=%d/ids=%v", dt, comp.zstd, comp.shuffle, n, withIDs)
					t.Run(name, func(t *testing.T) {
						vecs := randVecs(rng, n, 33)
						var ids []int64
						if withIDs && n > 0 {
							for i := 0; i < n; i++ {
								ids = append(ids, rng.Int63()-rng.Int63())
							}
						}
						h := Header{DType: dt, BlockRows: 4, Zstd: comp.zstd, Shuffle: comp.shuffle}
						if dt == INT8 {
							h.Scale, h.Offset = FitInt8(vecs, 33)
						}
						path := writeVectorFile(t, t.TempDir(), vecs, 33, h, ids)
						f, err := ReadVectorFile(path)
						if err != nil {
							t.Fatal(err)
						}
						got := f.Header()
						if got.Count != n || got.Dim != 33 || got.DType != dt || !got.Normalized || got.EncoderID != "tiny" ||
							got.ConfigHash != 42 || got.Zstd != comp.zstd || got.Shuffle != comp.shuffle || got.BlockRows != 4 || got.HasIDs != (ids != nil) {
							t.Fatalf("header %+v", got)
						}
						if !slices.Equal(f.IDs(), ids) {
							t.Fatalf("ids %v, want %v", f.IDs(), ids)
						}
						want := &Flat{h: h}
						want.h.Dim, want.h.Count = 33, n
						switch dt {
						case FP32:
							want.f32 = vecs
						case FP16:
							want.f16 = make([]uint16, len(vecs))
							encodeF16(want.f16, vecs)
						case INT8:
							want.i8 = make([]int8, len(vecs))
							encodeI8(want.i8, vecs, h.Scale, h.Offset)
						}
						for r := 0; r < n; r++ {
							if !slices.Equal(f.Vector(r), want.Vector(r)) {
								t.Fatalf("row %d differs after round trip", r)
							}
						}
						// Rewriting the loaded shard is bit-exact (int8 codes are copied, not refitted).
						p2 := filepath.Join(t.TempDir(), "again")
						if err := WriteVectorFile(p2, f, Header{BlockRows: 3, Zstd: !comp.zstd}); err != nil {
							t.Fatal(err)
						}
						f2, err := ReadVectorFile(p2)
						if err != nil {
							t.Fatal(err)
						}
						for r := 0; r < n; r++ {
							if !slices.Equal(f.Vector(r), f2.Vector(r)) {
								t.Fatalf("row %d differs after rewrite", r)
							}
						}
						if !slices.Equal(f2.IDs(), ids) {
							t.Fatalf("rewrite ids %v, want %v", f2.IDs(), ids)
						}
					})
				}
			}
		}
	}
}

func TestVectorFileReaderStreams(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	vecs := randVecs(rng, 10, 8)
	path := writeVectorFile(t, t.TempDir(), vecs, 8, Header{DType: FP32, BlockRows: 4, Zstd: true, Shuffle: true}, nil)
	sr, err := OpenVectorFileReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	var rows []int
	var got []float32
	for {
		row0, v, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row0)
		got = append(got, v...)
	}
	if !slices.Equal(rows, []int{0, 4, 8}) || !slices.Equal(got, vecs) {
		t.Fatalf("blocks at rows %v; values equal: %v", rows, slices.Equal(got, vecs))
	}
}

// TestVectorFileEveryByteFlipped flips each byte of a small file in turn: the
// header, quantisation section, blocks and end record are all checksummed,
// so every flip must be refused with ErrCorrupt.
func TestVectorFileEveryByteFlipped(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, h := range []Header{
		{DType: INT8, BlockRows: 3},
		{DType: FP16, BlockRows: 4, Zstd: true, Shuffle: true},
	} {
		vecs := randVecs(rng, 10, 5)
		ids := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		good, _ := os.ReadFile(writeVectorFile(t, t.TempDir(), vecs, 5, h, ids))
		dir := t.TempDir()
		for i := range good {
			bad := slices.Clone(good)
			bad[i] ^= 0x10
			p := filepath.Join(dir, "s")
			os.WriteFile(p, bad, 0o644)
			if _, err := ReadVectorFile(p); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v: byte %d flipped: error %v, want ErrCorrupt", h.DType, i, err)
			}
		}
		for n := 0; n < len(good); n++ {
			p := filepath.Join(dir, "s")
			os.WriteFile(p, good[:n], 0o644)
			if _, err := ReadVectorFile(p); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v: truncated to %d bytes: error %v, want ErrCorrupt", h.DType, n, err)
			}
		}
	}
}

func TestVectorFileCorruptNamesBlockAndOffset(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	good, _ := os.ReadFile(writeVectorFile(t, t.TempDir(), randVecs(rng, 10, 8), 8, Header{DType: FP32, BlockRows: 4}, nil))
	// Header: 52 fixed bytes + "tiny" + CRC = 60; blocks of 16 + 4·8·4 = 144 bytes.
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
		want   string
	}{
		{"truncated in block 2", func(b []byte) []byte { return b[:60+2*144+20] }, "block 2 at offset 348: stored length 64 runs past the end"},
		{"truncated end", func(b []byte) []byte { return b[:len(b)-7] }, "end record"},
		{"short header", func(b []byte) []byte { return b[:20] }, "header at offset 8"},
		{"magic", func(b []byte) []byte { b[1] = 'x'; return b }, "magic"},
		{"dtype", func(b []byte) []byte { b[12] = 9; return b }, "dtype 9 at offset 12"},
		{"block 1 payload", func(b []byte) []byte { b[60+144+40] ^= 1; return b }, "block 1 at offset 204: checksum mismatch"},
		{"block 0 rows", func(b []byte) []byte { b[64] = 5; return b }, "block 0 at offset 60: 5 rows, want 4"},
		{"count", func(b []byte) []byte { b[16] = 11; return b }, "header checksum"},
		{"trailing", func(b []byte) []byte { return append(b, 0) }, "trailing bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s")
			os.WriteFile(p, tc.mutate(slices.Clone(good)), 0o644)
			_, err := ReadVectorFile(p)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrCorrupt containing %q", err, tc.want)
			}
		})
	}
}

func TestVectorFileWriterErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		h    Header
		want string
	}{
		{Header{DType: 7, Dim: 3}, "Header.DType"},
		{Header{DType: FP32}, "Header.Dim"},
		{Header{DType: INT8, Dim: 3}, "Header.Scale/Offset"},
		{Header{DType: FP16, Dim: 3, BlockRows: -1}, "Header.BlockRows"},
	} {
		if _, err := CreateVectorFile(filepath.Join(dir, "x"), tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want error naming %s", tc.h, err, tc.want)
		}
	}
	w, err := CreateVectorFile(filepath.Join(dir, "y"), Header{DType: FP32, Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(make([]float32, 3)); !errors.Is(err, ErrDim) {
		t.Errorf("3 values at dim 2: %v, want ErrDim", err)
	}
	if err := w.Append(make([]float32, 2)); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendWithIDs(make([]float32, 2), []int64{1}); !errors.Is(err, ErrDim) {
		t.Errorf("ids after rows without: %v, want ErrDim", err)
	}
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("abort left %d files", len(ents))
	}
}

// TestVectorFileV1StillReads builds a version 1 file byte by byte (FORMAT.md,
// version 1) and reads it: indexes built before version 2 keep loading.
func TestVectorFileV1StillReads(t *testing.T) {
	le := binary.LittleEndian
	vecs := []float32{1, 2, 3, 4, 5, 6}
	b := []byte("RLSVEC01")
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, uint32(FP32))
	b = le.AppendUint64(b, 2)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint64(b, 42)
	b = le.AppendUint32(b, 4)
	b = append(b, "tiny"...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	var payload []byte
	for _, v := range vecs {
		payload = le.AppendUint32(payload, math.Float32bits(v))
	}
	b = append(b, payload...)
	b = le.AppendUint32(b, crc32.ChecksumIEEE(payload))
	b = append(b, "RLSVEC01"...)
	p := filepath.Join(t.TempDir(), "v1")
	os.WriteFile(p, b, 0o644)
	f, err := ReadVectorFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header(); h.Count != 2 || h.Dim != 3 || !h.Normalized || h.EncoderID != "tiny" || h.ConfigHash != 42 {
		t.Fatalf("header %+v", h)
	}
	if !slices.Equal(f.Vectors(0, 2), vecs) {
		t.Fatalf("vectors %v", f.Vectors(0, 2))
	}
	b[len(b)-13] ^= 1
	os.WriteFile(p, b, 0o644)
	if _, err := ReadVectorFile(p); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped v1 payload: %v", err)
	}
}

func FuzzReadVectorFile(f *testing.F) {
	dir := f.TempDir()
	rng := rand.New(rand.NewSource(5))
	for i, h := range []Header{{DType: FP32, BlockRows: 2}, {DType: INT8, BlockRows: 2, Zstd: true}, {DType: FP16, Shuffle: true, Zstd: true}} {
		good, _ := os.ReadFile(writeVectorFile(f, filepath.Join(dir), randVecs(rng, 4, 3), 3, h, []int64{int64(i), 2, 3, 4}))
		f.Add(good)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s")
		os.WriteFile(p, data, 0o644)
		if fl, err := ReadVectorFile(p); err == nil {
			fl.Search(context.Background(), make([]float32, fl.Dim()), 3)
		}
	})
}
