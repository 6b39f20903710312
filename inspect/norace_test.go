//go:build !race

package inspect_test

const raceEnabled = false
