//go:build race

package lru

// raceEnabled reports whether the race detector is on; timing tests skip then.
const raceEnabled = true
