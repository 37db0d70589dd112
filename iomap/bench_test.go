package iomap

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// BenchmarkIomapWrite is Xu Yang's dd sweep (seed 002) in real Go time: per
// op about 64 MiB written with dd's pattern — write(2)s of bs bytes at
// consecutive positions from one reused, page-aligned user buffer — on a null
// device (no storage cost, metadata-only page cache), with a dirty limit of
// 256 folios and a page cache of 1024, for the three kernels of the table.
// faultin-pages/page is the pre-fault cost per page written; ns/MiB is what
// should grow with bs for 6.6 only.
func BenchmarkIomapWrite(b *testing.B) {
	const target = 64 << 20
	for _, k := range kernels {
		for _, kib := range []uint64{400, 800, 1600, 2200, 3000, 4500} {
			b.Run(fmt.Sprintf("kernel=%s/bs=%dK", k.name, kib), func(b *testing.B) {
				m, err := bufcache.NewMachine(bufcache.Config{DirtyLimit: 256, PageCacheLimit: 1024})
				require.NoError(b, err)
				disk, err := blk.NewNullDisk("sda", 1<<40, 512)
				require.NoError(b, err)
				d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
				require.NoError(b, err)
				cpu := m.CPU(0)
				bs := kib << 10
				count := (target + bs - 1) / bs
				u := bufcache.NewUserBuf(make([]byte, bs), 0, m.PageSize()) // dd's buffer: really touched
				dd := func() {
					for j := range count {
						it, err := u.Iter(0, bs)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := BlkdevWrite(cpu, d, j*bs, it, k.opts); err != nil {
							b.Fatal(err)
						}
					}
				}
				dd() // warm up: the page cache at its limit, folios and buffers recycled
				b.SetBytes(int64(count * bs))
				before := cpu.Events()
				for b.Loop() {
					dd()
				}
				ev := cpu.Events().Sub(before)
				pages := float64(ev[bufcache.EvWriteIter])
				b.ReportMetric(float64(ev[bufcache.EvFaultInPage])/pages, "faultin-pages/page")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(count*bs>>20), "ns/MiB")
			})
		}
	}
}
