package blocksize_test

import (
	"fmt"
	"testing"

	"github.com/bhsim/bhsim/blocksize"
)

func BenchmarkInitBlocksize(b *testing.B) {
	sizes := []struct {
		name  string
		bytes uint64
	}{
		{"wd8003ffbx", wd8003ffbx},
		{"oddKiB", 1_000_001 * 1024},
	}
	for _, p := range blocksize.Policies() {
		for _, s := range sizes {
			b.Run(fmt.Sprintf("policy=%v/device=%s", p, s.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					n, err := p.InitBlocksize(s.bytes, 512, 4096)
					if err != nil {
						b.Fatal(err)
					}
					sink += uint64(n)
				}
			})
		}
	}
}

func BenchmarkGeometryLookup(b *testing.B) {
	for _, blockSize := range []uint32{512, 4096} {
		for _, block := range []blocksize.Block{1, 4 << 30} {
			b.Run(fmt.Sprintf("blocksize=%d/block=%d", blockSize, block), func(b *testing.B) {
				g := mustGeometry(b, 4096, blockSize)
				b.ReportAllocs()
				for b.Loop() {
					if g.BlockInRange(block) {
						sink += uint64(g.PageIndex(block)) + uint64(g.OffsetInPage(block))
					}
				}
			})
		}
	}
}

func BenchmarkValidateBlocksize(b *testing.B) {
	for _, size := range []uint32{4096, 1000} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if blocksize.ValidateBlocksize(size, 512, 4096) == nil {
					sink++
				}
			}
		})
	}
}
