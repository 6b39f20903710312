package ann

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

const shardMagicV1 = "RLSVEC01"

// readVectorFileV1 reads the version 1 format (FORMAT.md, "Version 1") after
// its 8-byte magic has been checked.
func readVectorFileV1(r io.Reader, size int64) (*Flat, error) {
	var fixed [48]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, fmt.Errorf("%w: header shorter than 48 bytes", ErrCorrupt)
	}
	le := binary.LittleEndian
	if string(fixed[:8]) != shardMagicV1 {
		return nil, fmt.Errorf("%w: bad magic at offset 0", ErrCorrupt)
	}
	if v := le.Uint32(fixed[8:]); v != 1 {
		return nil, fmt.Errorf("%w: version %d at offset 8, want 1", ErrCorrupt, v)
	}
	h := Header{DType: DType(le.Uint32(fixed[12:])), Count: int(le.Uint64(fixed[16:])), Dim: int(le.Uint32(fixed[24:]))}
	if h.DType != FP16 && h.DType != FP32 {
		return nil, fmt.Errorf("%w: unknown dtype %d at offset 12", ErrCorrupt, h.DType)
	}
	if m := le.Uint32(fixed[28:]); m != metricIP {
		return nil, fmt.Errorf("%w: unknown metric %d at offset 28", ErrCorrupt, m)
	}
	h.Normalized = le.Uint32(fixed[32:])&flagNormed != 0
	h.ConfigHash = le.Uint64(fixed[36:])
	idLen := int64(le.Uint32(fixed[44:]))
	if idLen > 4096 {
		return nil, fmt.Errorf("%w: encoder id length %d at offset 44", ErrCorrupt, idLen)
	}
	payloadOff := (48 + idLen + 7) / 8 * 8
	if h.Dim <= 0 || h.Count < 0 {
		return nil, fmt.Errorf("%w: count %d dim %d at offset 16", ErrCorrupt, h.Count, h.Dim)
	}
	payload := int64(h.Count) * int64(h.Dim) * int64(h.DType.size())
	if want := payloadOff + payload + 12; size != want || payload/int64(h.Dim) != int64(h.Count)*int64(h.DType.size()) {
		return nil, fmt.Errorf("%w: file is %d bytes, header (count %d, dim %d, %v) implies %d (truncated?)", ErrCorrupt, size, h.Count, h.Dim, h.DType, want)
	}
	rest := make([]byte, payloadOff-48)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, fmt.Errorf("%w: encoder id: %v", ErrCorrupt, err)
	}
	h.EncoderID = string(rest[:idLen])
	fl := &Flat{h: h, kernel: defaultKernel}
	crc := crc32.NewIEEE()
	buf := make([]byte, 1<<20)
	n := h.Count * h.Dim
	if h.DType == FP16 {
		fl.f16 = make([]uint16, n)
	} else {
		fl.f32 = make([]float32, n)
	}
	step := len(buf) / h.DType.size()
	for i := 0; i < n; i += step {
		m := min(step, n-i)
		chunk := buf[:m*h.DType.size()]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, fmt.Errorf("%w: payload at offset %d: %v", ErrCorrupt, payloadOff+int64(i*h.DType.size()), err)
		}
		crc.Write(chunk)
		for j := 0; j < m; j++ {
			if h.DType == FP16 {
				fl.f16[i+j] = le.Uint16(chunk[2*j:])
			} else {
				fl.f32[i+j] = math.Float32frombits(le.Uint32(chunk[4*j:]))
			}
		}
	}
	var tr [12]byte
	if _, err := io.ReadFull(r, tr[:]); err != nil || string(tr[4:]) != shardMagicV1 {
		return nil, fmt.Errorf("%w: bad trailer at offset %d", ErrCorrupt, payloadOff+payload)
	}
	if got := le.Uint32(tr[:]); got != crc.Sum32() {
		return nil, fmt.Errorf("%w: payload checksum mismatch (offset %d..%d)", ErrCorrupt, payloadOff, payloadOff+payload)
	}
	return fl, nil
}
