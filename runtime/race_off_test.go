//go:build !race

package runtime_test

// raceEnabled reports whether the tests run under the race detector, which
// slows the engine so much that some timing windows no longer open.
const raceEnabled = false
