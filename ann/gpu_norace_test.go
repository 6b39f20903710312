//go:build !race

package ann

const gpuRace = false
