package bench

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/bhsim/bhsim/bufcache"
)

// exactUnits are the benchmark metrics that come from the model's counts
// alone: the same for every run of the same benchmark, whatever the machine.
// (sim-MB/s and requests/MiB are left out: a dd benchmark's figures depend on
// how many ops b.N makes it run, through the dirty limit and the final sync.)
func exactUnits() []string {
	units := []string{"sim-ns/op", "sim-ns/page", "bios/page", "faultin-pages/page", "ring-walks/page", "rings/page"}
	for e := range bufcache.NumEvents {
		units = append(units, e.String()+"/op")
	}
	return units
}

// TestMain tells benchstat, when benchmarks run, that the simulated units are
// exact (benchfmt's "Unit <unit> assume=exact" lines), so that it compares
// them without asking for samples to estimate noise that is not there.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		for _, u := range exactUnits() {
			fmt.Printf("Unit %s assume=exact\n", u)
		}
	}
	os.Exit(m.Run())
}
