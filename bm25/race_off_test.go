//go:build !race

package bm25

// raceEnabled: under -race the long differential tests sample their queries.
const raceEnabled = false
