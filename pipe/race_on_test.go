//go:build race

package pipe

// raceEnabled: the race detector allocates beside the code under test, so
// tests that count allocations do not apply.
const raceEnabled = true
