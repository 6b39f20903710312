package cuda_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

// TestNoDevicePath checks the contract that matters on CPU machines: every
// entry point fails with an error matching ErrNoDevice, never a panic or
// an exit. On a GPU machine it checks the device list instead.
func TestNoDevicePath(t *testing.T) {
	devs, err := cuda.Devices()
	if err == nil {
		if len(devs) == 0 {
			t.Fatal("Devices returned no devices and no error")
		}
		t.Logf("GPU present: %+v", devs)
		return
	}
	if os.Getenv(cudatest.EnvRequireGPU) == "1" {
		t.Fatalf("REQUIRE_GPU=1 but Devices: %v", err)
	}
	if !errors.Is(err, cuda.ErrNoDevice) {
		t.Fatalf("Devices error %v does not match ErrNoDevice", err)
	}
	t.Logf("no GPU here: %v", err)
	for name, f := range map[string]func() error{
		"Open":          func() error { _, err := cuda.Open(0); return err },
		"DriverVersion": func() error { _, err := cuda.DriverVersion(); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if err := f(); !errors.Is(err, cuda.ErrNoDevice) {
				t.Fatalf("%s: got %v, want an error matching ErrNoDevice", name, err)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	tests := []struct {
		e    *cuda.Error
		want bool
	}{
		{&cuda.Error{Lib: "cuda", Op: "cuInit", Code: 100}, true},
		{&cuda.Error{Lib: "cuda", Op: "cuInit", Code: 35}, true},
		{&cuda.Error{Lib: "cuda", Op: "cuMemAlloc_v2", Code: 2}, false},
		{&cuda.Error{Lib: "cublas", Op: "cublasGemmEx", Code: 100}, false},
	}
	for _, tt := range tests {
		t.Run(tt.e.Error(), func(t *testing.T) {
			if got := errors.Is(tt.e, cuda.ErrNoDevice); got != tt.want {
				t.Fatalf("errors.Is(%v, ErrNoDevice) = %v, want %v", tt.e, got, tt.want)
			}
			var ce *cuda.Error
			if !errors.As(error(tt.e), &ce) || ce.Code != tt.e.Code {
				t.Fatal("errors.As lost the code")
			}
		})
	}
}

// TestDeviceRoundTrip (GPU): buffers, pinned copies, streams, and an fp16
// GEMM checked against a float64 loop.
func TestDeviceRoundTrip(t *testing.T) {
	dev := cudatest.Device(t)
	t.Logf("device %+v", dev.Info())
	err := dev.Do(func(c *cuda.Ctx) error {
		buf, err := c.Alloc(1 << 12)
		if err != nil {
			return err
		}
		defer buf.Close()
		src := make([]byte, 1<<12)
		for i := range src {
			src[i] = byte(i * 7)
		}
		if err := c.CopyHtoD(buf, 0, src); err != nil {
			return err
		}
		got := make([]byte, len(src))
		if err := c.CopyDtoH(got, buf, 0); err != nil {
			return err
		}
		for i := range got {
			if got[i] != src[i] {
				t.Errorf("byte %d: got %d want %d", i, got[i], src[i])
				break
			}
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		h, err := c.AllocHost(1 << 12)
		if err != nil {
			return err
		}
		defer h.Close()
		if err := c.CopyDtoHAsync(h, 0, buf, 0, 1<<12, s); err != nil {
			return err
		}
		if err := c.Sync(s); err != nil {
			return err
		}
		if string(h.Bytes()) != string(src) {
			t.Error("pinned async copy differs")
		}
		if err := c.CopyHtoD(buf, 4000, src[:200]); !errors.Is(err, cuda.ErrBadArg) {
			t.Errorf("out-of-range copy: got %v, want ErrBadArg", err)
		}
		// GEMM: C[m,n] = A^T B with A = [k, m] col-major (m rows of k), B = [k, n].
		m, n, k := 33, 7, 65
		a := make([]uint16, k*m)
		b := make([]uint16, k*n)
		for i := range a {
			a[i] = float16.Fromfloat32(float32(i%13-6) / 8).Bits()
		}
		for i := range b {
			b[i] = float16.Fromfloat32(float32(i%7-3) / 4).Bits()
		}
		ab, bb, cb, err := alloc3(c, len(a)*2, len(b)*2, m*n*4)
		if err != nil {
			return err
		}
		defer ab.Close()
		defer bb.Close()
		defer cb.Close()
		if err := c.CopyHtoD(ab, 0, u16bytes(a)); err != nil {
			return err
		}
		if err := c.CopyHtoD(bb, 0, u16bytes(b)); err != nil {
			return err
		}
		if err := c.GemmF16(s, true, false, m, n, k, 1, ab.Ptr(0), k, bb.Ptr(0), k, 0, cb.Ptr(0), m); err != nil {
			return err
		}
		if err := c.Sync(s); err != nil {
			return err
		}
		out := make([]byte, m*n*4)
		if err := c.CopyDtoH(out, cb, 0); err != nil {
			return err
		}
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				var want float64
				for l := 0; l < k; l++ {
					want += float64(float16.Frombits(a[i*k+l]).Float32()) * float64(float16.Frombits(b[j*k+l]).Float32())
				}
				got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*(j*m+i):]))
				if math.Abs(float64(got)-want) > 1e-4 {
					t.Errorf("C[%d,%d] = %v, want %v", i, j, got, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Do(func(*cuda.Ctx) error { return nil }); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Do after Close: %v, want ErrClosed", err)
	}
}

func alloc3(c *cuda.Ctx, a, b, d int) (*cuda.Buffer, *cuda.Buffer, *cuda.Buffer, error) {
	x, err := c.Alloc(int64(a))
	if err != nil {
		return nil, nil, nil, err
	}
	y, err := c.Alloc(int64(b))
	if err != nil {
		x.Close()
		return nil, nil, nil, err
	}
	z, err := c.Alloc(int64(d))
	if err != nil {
		x.Close()
		y.Close()
		return nil, nil, nil, err
	}
	return x, y, z, nil
}

func u16bytes(v []uint16) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], x)
	}
	return out
}

// TestMissingDriverLibrary re-runs TestNoDevicePath in a child process
// whose driver library path does not exist: the no-GPU contract must hold
// when libcuda.so.1 is absent altogether, not only when it finds no device.
func TestMissingDriverLibrary(t *testing.T) {
	if os.Getenv(cuda.EnvCUDALib) != "" {
		t.Skip("already the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestNoDevicePath$", "-test.v")
	cmd.Env = append(os.Environ(), cuda.EnvCUDALib+"=/nonexistent/libcuda.so.1", cudatest.EnvRequireGPU+"=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "/nonexistent/libcuda.so.1") {
		t.Fatalf("child did not report the missing library:\n%s", out)
	}
}

func TestCUBLASLibrary(t *testing.T) {
	lib, err := cuda.CUBLASLibrary()
	if err != nil && !errors.Is(err, cuda.ErrNoCUBLAS) {
		t.Fatalf("CUBLASLibrary: %v, want nil or ErrNoCUBLAS", err)
	}
	t.Logf("cuBLAS: %q, %v", lib, err)
}

// TestStreamsEventsGPU (GPU): memset and device-to-device copy, ordered
// across two streams by an event (the second stream copies what the first
// set, waiting without a host sync), timing events, and the new device
// attributes.
func TestStreamsEventsGPU(t *testing.T) {
	dev := cudatest.Device(t)
	in := dev.Info()
	t.Logf("%s: %d SMs, L2 %d bytes, %d bytes of shared memory per block (opt-in)", in.Name, in.SMs, in.L2Bytes, in.SharedOptin)
	if in.L2Bytes <= 0 || in.SharedOptin < 48<<10 {
		t.Errorf("device attributes: L2 %d bytes, shared opt-in %d", in.L2Bytes, in.SharedOptin)
	}
	err := dev.Do(func(c *cuda.Ctx) error {
		const n = 1 << 24 // 64 MiB: long enough that a missing wait shows
		a, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer a.Close()
		b, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer b.Close()
		s1, err := c.NewStream()
		if err != nil {
			return err
		}
		s2, err := c.NewStream()
		if err != nil {
			return err
		}
		ev, err := c.NewEvent(false)
		if err != nil {
			return err
		}
		t0, err := c.NewEvent(true)
		if err != nil {
			return err
		}
		t1, err := c.NewEvent(true)
		if err != nil {
			return err
		}
		if err := c.MemsetD32Async(b, 0, 0, n, s2); err != nil {
			return err
		}
		if err := c.Sync(s2); err != nil {
			return err
		}
		if err := c.Record(t0, s1); err != nil {
			return err
		}
		if err := c.MemsetD32Async(a, 0, 0xdeadbeef, n, s1); err != nil {
			return err
		}
		if err := c.Record(ev, s1); err != nil {
			return err
		}
		if err := c.Record(t1, s1); err != nil {
			return err
		}
		if err := c.WaitEvent(s2, ev); err != nil {
			return err
		}
		if err := c.CopyDtoDAsync(b, 0, a, 0, 4*n, s2); err != nil {
			return err
		}
		if err := c.Sync(s2); err != nil {
			return err
		}
		if err := c.EventSync(t1); err != nil {
			return err
		}
		ms, err := c.Elapsed(t0, t1)
		if err != nil {
			return err
		}
		t.Logf("memset of %d MiB: %.3f ms (%.0f GB/s)", 4*n>>20, ms, 4*n/float64(ms)/1e6)
		if ms <= 0 {
			t.Errorf("elapsed %v ms", ms)
		}
		got := make([]byte, 4*n)
		if err := c.CopyDtoH(got, b, 0); err != nil {
			return err
		}
		for i := 0; i < n; i += 4097 {
			if v := binary.LittleEndian.Uint32(got[4*i:]); v != 0xdeadbeef {
				t.Fatalf("word %d = %#x after the event-ordered copy, want 0xdeadbeef", i, v)
			}
		}
		if err := c.MemsetD32Async(a, 2, 0, 1, s1); !errors.Is(err, cuda.ErrBadArg) {
			t.Errorf("unaligned memset: %v, want ErrBadArg", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
