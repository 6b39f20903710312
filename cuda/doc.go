// Package cuda is the only package that talks to the CUDA driver: device
// selection, one owner goroutine per device holding the context, streams,
// device and pinned host buffers, module loading of our PTX/cubin, kernel
// launches and fp16 GEMM with fp32 accumulation through cuBLAS.
//
// # No cgo, one binary
//
// The driver API (libcuda.so.1) and cuBLAS (libcublas.so.13, .12 or .11, or
// Config.CUBLASLib) are bound at run time with github.com/ebitengine/purego,
// so the package builds with CGO_ENABLED=0 and without CUDA headers, and the
// same binary runs on machines with and without a GPU. There are no build
// tags: CI compiles and vets every line of this package. Without a driver or
// a device every entry point returns an error that matches ErrNoDevice
// (errors.Is), and callers fall back to the CPU. gorgonia.org/cu was
// rejected: its init calls os.Exit(1) without a GPU, its cuBLAS binding has
// no fp16 GEMM, and it links libcublas.so.11 (see README, "GPU").
//
// # Threads and ownership
//
// A CUDA context is current per OS thread. Open starts one goroutine locked
// to its OS thread, makes the device's primary context current there, and
// runs every operation on it: Device.Do(fn) hands fn a *Ctx that is valid
// only for the duration of fn. Device is safe for concurrent use; Ctx is
// not (it belongs to the owner goroutine). Buffers, streams and modules are
// created through a Ctx; their Close may be called from any goroutine (the
// release is queued to the owner) and is idempotent. Device.Close releases
// everything still open.
//
// Errors from the driver and cuBLAS are *Error{Lib, Op, Code}; codes that
// mean "no device / no driver" match ErrNoDevice.
//
// Example:
//
//	dev, err := cuda.Open(0)
//	if errors.Is(err, cuda.ErrNoDevice) { /* use the CPU */ }
//	defer dev.Close()
//	err = dev.Do(func(c *cuda.Ctx) error {
//		buf, err := c.Alloc(1 << 20)
//		if err != nil { return err }
//		defer buf.Close()
//		return c.CopyHtoD(buf, 0, make([]byte, 1<<20))
//	})
package cuda
