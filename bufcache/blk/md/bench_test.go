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

// BenchmarkPluggedStream measures the real CPU cost of a plugged sequential
// RAID6 write stream over four MemDisks (chunk 512 KiB), the way writeback
// sends it: each op is one 4 KiB page, submitted as one 4096-byte bio (bs=4096)
// or eight 512-byte bios (bs=512) under a plug finished every 256 pages, with
// data (into members written once beforehand) and without. It reports bios, stripe attachments, stripes handled and
// member bios per page: the first two differ by eight, the others not.
func BenchmarkPluggedStream(b *testing.B) {
	const memberSize, flushPages = 4 << 20, 256
	for _, bs := range []uint32{512, 4096} {
		for _, data := range []int{0, 1} {
			b.Run(fmt.Sprintf("bs=%d/data=%d", bs, data), func(b *testing.B) {
				a, _ := newArray(b, Raid6, 4, memberSize, 0)
				var buf []byte
				if data == 1 {
					buf = make([]byte, pageSize)
					for i := range buf {
						buf[i] = byte(i * 7)
					}
					whole := make([]byte, a.Sectors()<<blk.SectorShift) // the sparse store grows here, not while timed
					require.NoError(b, doIO(b, a, blk.OpWrite, 0, ioOpts{data: whole}))
				}
				bios := make([]blk.Bio, flushPages*pageSize/bs)
				endIO := func(*blk.Bio) {}
				var plug blk.Plug
				var page, sector uint64
				write := func() {
					if page%flushPages == 0 {
						_ = plug.Finish()
						plug.Start()
					}
					for i := range uint64(pageSize / bs) {
						bio := &bios[(page%flushPages)*uint64(pageSize/bs)+i]
						bio.Reset(blk.OpWrite, sector)
						var seg []byte
						if buf != nil {
							seg = buf[i*uint64(bs) : (i+1)*uint64(bs)]
						}
						bio.AddVec(seg, bs)
						bio.EndIO = endIO
						blk.SubmitBio(&plug, a, bio)
						if sector += uint64(bs) >> blk.SectorShift; sector >= a.Sectors() {
							sector = 0
						}
					}
					page++
				}
				for range 2 * flushPages { // warm the stripe cache and the free lists
					write()
				}
				_ = plug.Finish()
				page = 0
				before := a.Stats()
				b.SetBytes(pageSize)
				b.ReportAllocs()
				for b.Loop() {
					write()
				}
				_ = plug.Finish()
				st := a.Stats()
				n := float64(b.N)
				b.ReportMetric(float64(st.BiosIn-before.BiosIn)/n, "bios/page")
				b.ReportMetric(float64(st.StripeAttach-before.StripeAttach)/n, "attaches/page")
				b.ReportMetric(float64(st.Stripes-before.Stripes)/n, "stripes/page")
				b.ReportMetric(float64(st.MemberBios-before.MemberBios)/n, "member-bios/page")
			})
		}
	}
}
