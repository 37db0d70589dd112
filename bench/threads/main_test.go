package threads

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain runs the package's tests with the garbage collector set as
// cmd/bhsim sets it (GOGC 400 under a 2 GiB soft limit, unless GOGC or
// GOMEMLIMIT say otherwise): the full-size reproductions hold simulated
// page caches, large heaps of pointers that every cycle marks, and at Go's
// default they spend about a sixth of their time collecting. It changes no
// simulated figure.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(2 << 30)
	}
	os.Exit(m.Run())
}
