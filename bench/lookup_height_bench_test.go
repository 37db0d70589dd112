package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// BenchmarkFindGetBlockSlowHeight measures __find_get_block_slow on one
// cached 4 KiB block of a 16 TiB metadata-only device, placed at the first
// page of each xarray height 1 … 6, with both page-cache indexes: on the
// xarray the cost grows by one level per height (index-levels/op), on the
// B-tree it depends only on the number of cached pages (one). The LRU, in
// front, pays for none of it (BenchmarkFindGetBlock, path=lru).
func BenchmarkFindGetBlockSlowHeight(b *testing.B) {
	for _, kind := range []pageindex.Kind{pageindex.KindXArray, pageindex.KindBTree} {
		for h := 1; h <= 6; h++ {
			b.Run(fmt.Sprintf("index=%s/height=%d", kind, h), func(b *testing.B) {
				block := workload.FirstPageOfHeight(h) // one 4 KiB block per page
				m, d := openLookup(b, bufcache.Config{Index: kind, LRU: bufcache.LRURemoved}, 4096, block)
				if kind == pageindex.KindXArray {
					require.Equal(b, h, d.IndexHeight())
				}
				cpu := m.CPU(0)
				b.ReportAllocs()
				before := cpu.Events()
				for b.Loop() {
					bufcache.Brelse(cpu, d.FindGetBlockSlow(cpu, block))
				}
				reportSim(b, cpu.Events().Sub(before), bufcache.EvIndexLevel)
			})
		}
	}
}
