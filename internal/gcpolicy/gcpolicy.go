// Package gcpolicy holds how bhsim's programs run Go's garbage collector:
// a simulated page cache is a large heap of pointers (folios, buffer heads,
// the index) that every cycle marks, with write barriers on while it does,
// so bhsim collects less often than Go's default. The command, the tests
// of the full-size reproductions and the browser's simulator apply the
// same policy, from here. It changes no simulated figure.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the garbage collector's target (GOGC) bhsim runs with unless
// GOGC says otherwise. At 400 instead of Go's default of 100 it collects a
// quarter as often. A built reproduce on the 2-core development VM took
// 9.7–10.0 s of wall time and 17.7–18.3 s of CPU time at 400, 10.5–11.1 s
// and 19.3–20.3 s at 200; the full-size reproductions' tests spend about a
// sixth of their time collecting at 100.
const Percent = 400

// MemoryLimit is the soft heap limit (GOMEMLIMIT) bhsim runs with unless
// GOMEMLIMIT says otherwise: at Percent the heap may grow to five times
// what is live before a collection, and a reproduce's peak RSS varied from
// 1.3 to 2.6 GiB without a limit (1.1–1.3 GiB at GOGC 200); with it,
// 1.1–1.6 GiB over four runs, in the same time. Near the limit the
// collector runs sooner; below it nothing changes, and a workload whose
// live heap is larger still runs, with the collector busier.
const MemoryLimit = 2 << 30

// Apply sets Percent and MemoryLimit, each unless its environment variable
// (GOGC, GOMEMLIMIT) is set, which the runtime has then applied already.
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
}
