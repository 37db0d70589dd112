package md

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// BenchmarkWrite measures the real CPU cost of a sequential write through each
// personality over four MemDisks (chunk 512 KiB): a 4 KiB bio (one page, the
// block size after the revert) and a 1 MiB bio (dd bs=1M), metadata-only
// (data=0: mapping, member bios, stripe planning) and with data (data=1: plus
// the copies, the parity and the stores, into members written once beforehand
// so that the sparse store does not grow while timed). It reports member bios
// and RAID6 stripes per op.
func BenchmarkWrite(b *testing.B) {
	const memberSize = 4 << 20
	sizes := []struct {
		name string
		n    uint32
	}{{"4K", 4 << 10}, {"1M", 1 << 20}}
	for _, level := range allLevels {
		for _, size := range sizes {
			for _, data := range []int{0, 1} {
				b.Run(fmt.Sprintf("level=%s/size=%s/data=%d", level, size.name, data), func(b *testing.B) {
					a, _ := newArray(b, level, 4, memberSize, 0)
					var buf []byte
					if data == 1 {
						buf = make([]byte, size.n)
						for i := range buf {
							buf[i] = byte(i * 7)
						}
						whole := make([]byte, a.Sectors()<<blk.SectorShift)
						require.NoError(b, doIO(b, a, blk.OpWrite, 0, ioOpts{data: whole}))
					}
					var bio blk.Bio
					endIO := func(*blk.Bio) {}
					sectors := uint64(size.n) >> blk.SectorShift
					var sector uint64
					write := func() {
						bio.Reset(blk.OpWrite, sector)
						bio.AddVec(buf, size.n)
						bio.EndIO = endIO
						a.Submit(&bio)
						if bio.Err != nil {
							require.NoError(b, bio.Err)
						}
						if sector += sectors; sector+sectors > a.Sectors() {
							sector = 0
						}
					}
					write() // warm the array's free lists
					before := a.Stats()
					b.SetBytes(int64(size.n))
					b.ReportAllocs()
					for b.Loop() {
						write()
					}
					st := a.Stats()
					n := float64(st.BiosIn - before.BiosIn)
					b.ReportMetric(float64(st.MemberBios-before.MemberBios)/n, "member-bios/op")
					b.ReportMetric(float64(st.Stripes-before.Stripes)/n, "stripes/op")
				})
			}
		}
	}
}
