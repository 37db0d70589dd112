package iomap_test

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/iomap"
)

// One dd write of bs=4500K to /dev/sda under the three kernels of Xu Yang's
// table: every kernel copies 1125 pages, one per iteration, but v6.6
// pre-faults up to the rest of a 2 MiB window of the user buffer before each.
func ExampleBlkdevWrite() {
	for _, k := range []struct {
		name string
		opts iomap.Options
	}{
		{"6.6", iomap.Options{}},
		{"6.6-revert", iomap.Options{Path: iomap.PathBufferHead}},
		{"6.6-fix", iomap.Options{Chunk: iomap.ChunkMappingMaxFolioSize}},
	} {
		m, _ := bufcache.NewMachine(bufcache.Config{})
		disk, _ := blk.NewNullDisk("sda", 1<<30, 512)
		d, _ := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
		cpu := m.CPU(0)
		it, _ := bufcache.NewUserBufSize(4500<<10, 0, m.PageSize()).Iter(0, 4500<<10)
		n, _ := iomap.BlkdevWrite(cpu, d, 0, it, k.opts)
		ev := cpu.Events()
		fmt.Printf("%-10s %d bytes: %d pages copied, %6d user pages faulted in (%.1f per page)\n", k.name, n,
			ev[bufcache.EvWriteIter], ev[bufcache.EvFaultInPage],
			float64(ev[bufcache.EvFaultInPage])/float64(ev[bufcache.EvWriteIter]))
	}
	// Output:
	// 6.6        4608000 bytes: 1125 pages copied, 267807 user pages faulted in (238.1 per page)
	// 6.6-revert 4608000 bytes: 1125 pages copied,   1125 user pages faulted in (1.0 per page)
	// 6.6-fix    4608000 bytes: 1125 pages copied,   1125 user pages faulted in (1.0 per page)
}

// blkdev_iomap_begin maps from the offset, aligned down to the logical block
// size, to the end of the device. On a device whose size is not a multiple
// of its logical block size, the original check lets an offset at i_size
// through; the fix refuses it.
func ExampleBlkdevIomapBegin() {
	m, _ := iomap.BlkdevIomapBegin(iomap.EOFAligned, 1<<30, 512, 1000)
	fmt.Println(m)
	const odd = 10*4096 + 512
	for _, check := range []iomap.EOFCheck{iomap.EOFAligned, iomap.EOFRaw} {
		m, err := iomap.BlkdevIomapBegin(check, odd, 4096, odd)
		if err != nil {
			fmt.Printf("%-7s at i_size: %v\n", check, err)
			continue
		}
		fmt.Printf("%-7s at i_size: %v, ending at i_size\n", check, m)
	}
	// Output:
	// mapped [512, +1073741312) at 512 flags=buffer_head
	// aligned at i_size: mapped [40960, +512) at 40960 flags=buffer_head, ending at i_size
	// raw     at i_size: iomap: offset at or past the end of the device: bufcache: I/O error: offset 41472 (checked 41472) on a 41472-byte device
}

// MAX_PAGECACHE_ORDER and the chunk iomap_write_iter starts with, before and
// after the fix, for the page sizes of x86-64 and arm64.
func ExampleMaxPagecacheOrder() {
	for _, ps := range []uint32{4096, 16384, 65536} {
		order, _ := iomap.MaxPagecacheOrder(ps, true, false)
		capped, _ := iomap.MaxPagecacheOrder(ps, true, true)
		v66, _ := iomap.ChunkMaxPagecacheOrder.Chunk(ps, order)
		fix, _ := iomap.ChunkMappingMaxFolioSize.Chunk(ps, order)
		fmt.Printf("PAGE_SIZE %5d: order %2d (capped %d), 6.6 chunk %3d MiB, fixed chunk %2d KiB\n",
			ps, order, capped, v66>>20, fix>>10)
	}
	// Output:
	// PAGE_SIZE  4096: order  9 (capped 9), 6.6 chunk   2 MiB, fixed chunk  4 KiB
	// PAGE_SIZE 16384: order 11 (capped 11), 6.6 chunk  32 MiB, fixed chunk 16 KiB
	// PAGE_SIZE 65536: order 13 (capped 11), 6.6 chunk 512 MiB, fixed chunk 64 KiB
}

// The iteration behind every iomap operation: ask the Ops for a mapping,
// process what it covers, advance. The block device's one mapping covers
// the rest of the device, so a write(2) is normally one round.
func ExampleIter() {
	m, _ := bufcache.NewMachine(bufcache.Config{})
	disk, _ := blk.NewMemDisk("sda", 1<<20, 512)
	d, _ := m.Open(disk, bufcache.DeviceOptions{})
	it := iomap.NewIter(m.CPU(0), d, iomap.BlkdevOps(iomap.EOFRaw), 5000, 10000, iomap.IterWrite)
	for it.Next() {
		fmt.Printf("at %d: %v, %d bytes to process\n", it.Pos(), it.Map(), it.Length())
		it.SetProcessed(min(it.Length(), 4096), nil) // pretend to do a page at a time
	}
	fmt.Println("ended at", it.Pos(), "error", it.Err())
	// Output:
	// at 5000: mapped [4608, +1043968) at 4608 flags=buffer_head, 10000 bytes to process
	// at 9096: mapped [8704, +1039872) at 8704 flags=buffer_head, 5904 bytes to process
	// at 13192: mapped [12800, +1035776) at 12800 flags=buffer_head, 1808 bytes to process
	// ended at 15000 error <nil>
}
