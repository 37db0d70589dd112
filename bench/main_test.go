package bench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/race"
)

// goUnits are the benchmark units Go measures: everything else a benchmark
// here reports is simulated and exact.
var goUnits = []string{"ns/op", "B/op", "allocs/op", "MB/s"}

// exactUnits are the benchmark metrics that come from the model's counts
// alone: the same for every run of the same benchmark, whatever the machine
// and whatever b.N (TestSimulatedMetricsExact checks it).
func exactUnits() []string {
	units := []string{"sim-ns/op", "sim-ns/page", "sim-MB/s", "bios/page", "requests/MiB", "faultin-pages/page",
		"ring-walks/page", "rings/page"}
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

// benchRuns runs the benchmarks matching pattern in a child process of this
// test binary at -benchtime=benchtime and returns each result line's
// simulated metrics by benchmark name.
func benchRuns(t *testing.T, pattern, benchtime string) map[string]map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench="+pattern, "-test.benchtime="+benchtime)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	runs := map[string]map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		m := map[string]string{}
		for i := 2; i+1 < len(f); i += 2 {
			if !slices.Contains(goUnits, f[i+1]) {
				m[f[i+1]] = f[i]
			}
		}
		runs[f[0]] = m
	}
	return runs
}

// TestSimulatedMetricsExact runs every benchmark of the package at
// -benchtime=1x and at 100x and checks that each simulated figure is the
// same in both, and that every unit they report is declared exact to
// benchstat. The two runs are child processes, run side by side.
func TestSimulatedMetricsExact(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("runs the package's benchmarks twice: not under -short or -race")
	}
	var one, hundred map[string]map[string]string
	t.Run("runs", func(t *testing.T) {
		t.Run("1x", func(t *testing.T) { t.Parallel(); one = benchRuns(t, ".", "1x") })
		t.Run("100x", func(t *testing.T) { t.Parallel(); hundred = benchRuns(t, ".", "100x") })
	})
	require.NotEmpty(t, one)
	functions := map[string]bool{}
	for name, m := range one {
		functions[strings.Split(name, "/")[0]] = true
		require.Contains(t, hundred, name)
		assert.NotEmpty(t, m, "%s reports no simulated figure", name)
		assert.Equal(t, m, hundred[name], "%s: simulated figures at 1x and 100x", name)
		for unit := range m {
			assert.Contains(t, exactUnits(), unit, "%s reports %s but does not declare it exact", name, unit)
		}
	}
	assert.Len(t, functions, 8, "every benchmark function of the package was checked: %v", functions)
}
