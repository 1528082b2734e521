//go:build !race

package vector

// raceEnabled shrinks the large quantisation tests under the race detector.
const raceEnabled = false
