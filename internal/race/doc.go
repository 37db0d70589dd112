// Package race reports whether the binary was built with the race detector, so
// that tests comparing speeds can skip themselves where instrumentation would
// distort the ratio they check.
package race
