package pageindex

import (
	"fmt"
	"testing"
)

// BenchmarkLoad measures one page-cache lookup (the Load at the heart of
// __find_get_block_slow) by implementation, looked-up page and cache size.
//
//	kind=xarray|btree     the implementation
//	page=0|1|536870912    the page index looked up. Pages 0 and 1 are where
//	                      Tosatti's test (block 1) lands, depending on the
//	                      block size; 536870912 = 2^29 is the page holding
//	                      512-byte block 4G, Willy's "block 4G" question in
//	                      the per-CPU bh LRU thread. The key is
//	                      "page", not "index" or "block", to say which unit.
//	cached=1|4096         pages cached: the looked-up page alone, or 4096
//	                      consecutive pages starting at it (16 MiB)
//
// The levels/op metric is the levels Load reports: for the xarray it follows
// the page index (0 for a lone page 0, 5 for page 2^29), for the btree the
// number of cached pages.
func BenchmarkLoad(b *testing.B) {
	for _, k := range kinds {
		for _, page := range []uint64{0, 1, 1 << 29} {
			for _, cached := range []uint64{1, 4096} {
				name := fmt.Sprintf("kind=%s/page=%d/cached=%d", k, page, cached)
				b.Run(name, func(b *testing.B) {
					idx := New[folio](k)
					for i := page; i < page+cached; i++ {
						idx.Insert(i, &folio{index: i})
					}
					var levels int
					var f *folio
					b.ReportAllocs()
					for b.Loop() {
						f, levels = idx.Load(page)
					}
					if f == nil || f.index != page {
						b.Fatalf("page %d not found", page)
					}
					b.ReportMetric(float64(levels), "levels/op")
				})
			}
		}
	}
}
