//go:build race

package router_test

// raceEnabled: under -race the long differential tests sample their queries.
const raceEnabled = true
