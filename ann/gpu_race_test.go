//go:build race

package ann

// gpuRace is true under the race detector, which makes the reference GEMM
// of the largest GPU-simulation cases (100,003 × 384 and × 768) take
// minutes; those cases run in the plain `go test ./ann` and in the test
// binary bench/gpu/run.sh carries (built without -race).
const gpuRace = true
