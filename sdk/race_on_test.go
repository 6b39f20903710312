//go:build race

package sdk

// raceOn: under -race, wall-clock bounds of tests are not asserted (the
// detector slows JSON decoding tenfold and more).
const raceOn = true
