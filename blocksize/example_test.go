package blocksize_test

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
)

// The WD8003FFBX disks of Maxim Mikityanskiy's Helios4 (the set_init_blocksize thread) are 512e:
// 512-byte logical sectors, 8,001,563,222,016 bytes = 4096 × 1,953,506,646.
func ExamplePolicy_InitBlocksize() {
	const disk = 8_001_563_222_016
	// A partition of 1,000,001 KiB: an odd number of 1 KiB units is a
	// multiple of 1024 but not of 2048, so the doubling stops at 1 KiB.
	const partition = 1_000_001 * 1024
	for _, p := range blocksize.Policies() {
		d, err := p.InitBlocksize(disk, 512, blocksize.DefaultPageSize)
		if err != nil {
			fmt.Println(err)
			return
		}
		part, err := p.InitBlocksize(partition, 512, blocksize.DefaultPageSize)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-7s disk %d, partition %d\n", p, d, part)
	}
	// Output:
	// grow    disk 4096, partition 1024
	// logical disk 512, partition 512
}

func ExampleValidateBlocksize() {
	const logical, page = 512, blocksize.DefaultPageSize
	for _, size := range []uint32{1000, 256, 8192, 4096} {
		fmt.Println(size, blocksize.ValidateBlocksize(size, logical, page))
	}
	// A 4Kn disk refuses 512-byte blocks.
	fmt.Println(blocksize.ValidateBlocksize(512, 4096, page))
	// Output:
	// 1000 blocksize: set_blocksize(1000): not a power of two
	// 256 blocksize: set_blocksize(256): below 512 bytes (256 < 512)
	// 8192 blocksize: set_blocksize(8192): above PAGE_SIZE (8192 > 4096)
	// 4096 <nil>
	// blocksize: set_blocksize(512): below the logical block size (512 < 4096)
}

func ExampleGeometry() {
	g, err := blocksize.NewGeometry(blocksize.DefaultPageSize, 512)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("buffer_heads per page:", g.BlocksPerPage())
	// Tosatti's block 1, and Willy's "block 4UL*1024*1024*1024".
	for _, block := range []blocksize.Block{1, 4 << 30} {
		fmt.Printf("block %d: page %d, offset %d\n", block, g.PageIndex(block), g.OffsetInPage(block))
	}
	// Output:
	// buffer_heads per page: 8
	// block 1: page 0, offset 512
	// block 4294967296: page 536870912, offset 0
}
