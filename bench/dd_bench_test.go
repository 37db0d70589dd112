package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// BenchmarkDDWrite runs dd's write loop (bs=1M) on the Helios4 storage
// stack, one 1 MiB write(2) per op with background writeback, for the two
// set_init_blocksize policies of the thread on every layout, and ends with
// dd's closing sync off the clock. It reports Go's throughput (SetBytes) and,
// from the model, the simulated MB/s under the uncalibrated Helios4 profile,
// bios per page and disk requests per MiB. Short runs stay under the dirty
// limit until the sync, so they measure writeback through the final sync on
// the writer's CPU; runs of a few hundred ops reach the flusher's steady
// state.
func BenchmarkDDWrite(b *testing.B) {
	p := Helios4()
	for _, pol := range []struct{ name, preset string }{{"simplified", "5.10.10"}, {"loop", "5.10.10+revert"}} {
		for _, l := range Layouts() {
			b.Run(fmt.Sprintf("policy=%s/dev=%s", pol.name, l), func(b *testing.B) {
				preset, err := PresetByName(pol.preset)
				require.NoError(b, err)
				run, err := Helios4DD(l, preset, false).Start()
				require.NoError(b, err)
				b.SetBytes(1 << 20)
				for b.Loop() {
					if err := run.Block(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				r, err := run.Close()
				require.NoError(b, err)
				b.ReportMetric(r.MBps(p), "sim-MB/s")
				b.ReportMetric(float64(r.CPU[0][bufcache.EvBioSubmit]+r.CPU[1][bufcache.EvBioSubmit])/r.Pages(), "bios/page")
				b.ReportMetric(float64(r.Requests())/(float64(r.Bytes)/(1<<20)), "requests/MiB")
			})
		}
	}
}
