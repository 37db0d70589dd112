package scenario

import "fmt"

// Tool is the identity of the binary that wrote an output, as every
// versioned JSON output of bhsim carries it ("tool"): a scenario Result
// written by `bhsim run`, and (package bench/report, whose report.Tool it
// is) reproduce, sweep, validate and a workload's distributions.
type Tool struct {
	// Name is "bhsim".
	Name string `json:"name"`
	// Version is the version the binary was given at link time, else the
	// main module's version ("v1.2.0" when installed at a version),
	// "(devel)" when built from a checkout, "(unknown)" without build
	// information.
	Version string `json:"version"`
	// Revision and Modified are the VCS revision the go command stamped
	// (or the linker was given) and whether the tree had changes; empty and
	// false when not stamped.
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the Go release the binary was built with.
	Go string `json:"go"`
}

// String prints t as `bhsim version` does, but for the platform:
// "bhsim VERSION (revision REVISION[, modified]) GO", the revision
// "unknown" when none was stamped. O(1).
func (t Tool) String() string {
	rev := t.Revision
	if rev == "" {
		rev = "unknown"
	}
	if t.Modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s %s (revision %s) %s", t.Name, t.Version, rev, t.Go)
}
