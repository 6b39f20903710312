//go:build race

package inspect_test

// raceEnabled: the race detector slows the browser test's Go side (a
// 10 MB observation scored three times, 1,000 rollouts scored) about
// tenfold; TestBrowser runs without it (make test-browser).
const raceEnabled = true
