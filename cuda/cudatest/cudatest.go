// Package cudatest holds test helpers for code that needs a GPU. Test-only.
package cudatest

import (
	"errors"
	"os"
	"testing"

	"github.com/rlsearch/rlsearch/cuda"
)

// EnvRequireGPU makes a missing GPU fail a test instead of skipping it
// (bench/gpu/run.sh sets it on the device machine).
const EnvRequireGPU = "REQUIRE_GPU"

// Device opens GPU ordinal 0 for the test and closes it at cleanup. Without
// a driver or device it skips tb, or fails it when REQUIRE_GPU=1.
func Device(tb testing.TB) *cuda.Device {
	tb.Helper()
	dev, err := cuda.Open(0)
	if err != nil {
		Skip(tb, err)
	}
	tb.Cleanup(func() { dev.Close() })
	return dev
}

// Skip skips tb because of err (no GPU), or fails it when REQUIRE_GPU=1 or
// when err is not a "no device" error.
func Skip(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv(EnvRequireGPU) == "1" {
		tb.Fatalf("GPU required (%s=1): %v", EnvRequireGPU, err)
	}
	if !errors.Is(err, cuda.ErrNoDevice) {
		tb.Fatalf("unexpected error (not ErrNoDevice): %v", err)
	}
	tb.Skipf("no GPU: %v", err)
}

// SkipUnusable skips tb because a GPU-only constructor failed with err:
// no device (as Skip), or a device that is present but unusable (a
// driver, library or architecture it cannot run on); under REQUIRE_GPU=1
// both fail tb instead.
func SkipUnusable(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, cuda.ErrNoDevice) {
		Skip(tb, err)
	}
	if os.Getenv(EnvRequireGPU) == "1" {
		tb.Fatalf("REQUIRE_GPU=1: %v", err)
	}
	tb.Skipf("GPU present but unusable: %v", err)
}
