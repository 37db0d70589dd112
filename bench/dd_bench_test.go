package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// ddFixedCount is the dd count= of DDWrite's simulated figures: 256 MiB,
// four times the Helios4's background-writeback threshold (64 MiB), so the
// flusher's steady state is part of them.
const ddFixedCount = 256

// BenchmarkDDWrite runs dd's write loop (bs=1M) on the Helios4 storage stack
// of the set_init_blocksize thread for its two block-size policies (logical:
// 5.10.10, 512-byte buffers; grow: 5.10.10+revert, 4096-byte buffers) on
// every layout. One op is one 1 MiB write(2), with background writeback, in
// one long stream: ns/op and MB/s are Go's time. The simulated figures come
// from a separate dd of ddFixedCount MiB with the same configuration, run
// once per process on the clock and closed by dd's sync: sim-MB/s under the uncalibrated
// Helios4 profile, bios per page and disk requests per MiB.
func BenchmarkDDWrite(b *testing.B) {
	p := timing.Helios4()
	for _, pol := range []struct{ name, kernel string }{{"logical", "5.10.10"}, {"grow", "5.10.10+revert"}} {
		for _, l := range workload.Layouts() {
			b.Run(fmt.Sprintf("policy=%s/dev=%s", pol.name, l), func(b *testing.B) {
				dd := workload.Helios4DD(l, engine.MustKernel(pol.kernel), false)
				run, err := dd.Start()
				require.NoError(b, err)
				b.SetBytes(int64(dd.BS))
				for b.Loop() {
					if err := run.Block(); err != nil {
						b.Fatal(err)
					}
				}
				reportFixed(b, "DDWrite/"+pol.name+"/"+l.String(), func() ([]metric, error) {
					fixed := dd
					fixed.Count = ddFixedCount
					r, err := fixed.OnClock(context.Background(), p, nil)
					if err != nil {
						return nil, err
					}
					return []metric{{r.MBps, "sim-MB/s"}, {r.PerPage(timing.Ev(bufcache.EvBioSubmit)), "bios/page"},
						{256 * r.PerPage(timing.ParamRequest), "requests/MiB"}}, nil
				})
			})
		}
	}
}
