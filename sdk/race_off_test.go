//go:build !race

package sdk

const raceOn = false
