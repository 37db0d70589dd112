package workload

import (
	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// WD8003FFBXBytes is the capacity of a WD Red Pro 8 TB (15 628 053 168
// sectors of 512 bytes).
const WD8003FFBXBytes = 15628053168 * 512

// helios4Lowmem is the Helios4's low memory: a 32-bit ARM kernel with the
// 3G/1G split (CONFIG_VMSPLIT_3G, the ARMv7 distributions' choice, Armbian's
// mvebu kernels among them) maps 1 GiB at PAGE_OFFSET 0xC0000000, of which
// the vmalloc area takes the top 240 MiB and its 8 MiB guard gap
// (arch/arm/mm/mmu.c, vmalloc_min): 768 MiB. The other 1280 MiB of the
// board's 2 GiB are highmem.
const helios4Lowmem = 768 << 20

// helios4PageCache is what the Helios4's block-device page cache may hold:
// the block device's mapping allocates with GFP_USER (bdget in v5.10,
// bdev_alloc in v6.x), which has no __GFP_HIGHMEM, so its folios come from
// low memory only; of the 768 MiB, the kernel keeps about 128 MiB (its image,
// mem_map's 16 MiB of struct page for 2 GiB, the slab caches and the zone
// watermarks; an estimate). The dirty thresholds are fractions of the same
// memory: global_dirtyable_memory leaves highmem out unless
// vm.highmem_is_dirtyable is set.
const helios4PageCache = helios4Lowmem - 128<<20

// Helios4DD returns Maxim Mikityanskiy's run in the set_init_blocksize
// thread: dd bs=1M count=2000 on a Helios4 (2 × Cortex-A9, 2 GiB) with four
// WD8003FFBX disks, arrays of 512 KiB chunks (mdadm's default) over the first
// partition of each disk, running kernel k. The block device's page cache
// may hold 640 MiB (low memory only: a 32-bit kernel's page cache of a block
// device lives in lowmem), so most of the 2000
// MiB is reclaimed by kswapd as dd goes and the rest dropped by dd's last
// close (kill_bdev); background writeback starts at 10 % of that memory
// (dirty_background_ratio's default of the dirtyable memory, 16 384
// folios), where the model's flusher writes the device's dirty folios back.
// The disks hang off the Armada 388's AHCI ports, so their queues take 168
// segments (blk.AHCIMaxSegments): 84 KiB requests of 512-byte bios. The
// partitions' 1 MiB offset is not modelled: it moves every request by the
// same amount.
func Helios4DD(l Layout, k engine.Kernel, read bool) DD {
	return DD{Layout: l, Kernel: k, Read: read, BS: 1 << 20, Count: 2000, CPUs: 2,
		Disk: blk.WD8003FFBX(), DiskBytes: WD8003FFBXBytes, MaxSegments: blk.AHCIMaxSegments, Members: 4, Chunk: md.DefaultChunkSize,
		PageCacheLimit: helios4PageCache >> 12, DirtyLimit: helios4PageCache / 10 >> 12}
}

// imx8PageCache is what the page cache of Xu Yang's board may hold, as the
// timing.IMX8Board profile assumes it: three quarters of its 2 GiB, the
// rest the kernel's and the processes'. It is the dirtyable memory too
// (global_dirtyable_memory counts the free pages and the file pages, what
// the page cache can grow into), as for the Helios4 and the engine's
// machines (engine.RunOptions.MemoryBytes).
const imx8PageCache = 1536 << 20

// IMX8BoardDD returns Xu Yang's run for kernel k and dd bs: `dd
// if=/dev/zero of=/dev/sda bs=X count=N` writing about 4 GiB (scale scales
// it: 1 is the thread's size) on his board as the timing.IMX8Board profile
// assumes it — four CPUs, 2 GiB of RAM (1.5 GiB of page cache, which is
// also the dirtyable memory: background writeback at 10 % of it), a 64 GB SSD with 512-byte logical blocks, which
// set_init_blocksize grows to 4096 (6.6 has the revert of the Helios4
// thread). The thread names no disk, so the SSD has no timing model of its
// own: the profile prices its requests and bytes (timing.ParamDiskRequest,
// timing.ParamDiskByte), as assumptions a fit may name.
func IMX8BoardDD(k engine.Kernel, bs uint64, scale float64) DD {
	count := uint64(float64(4<<30)/float64(bs)*scale + 0.5)
	return DD{Layout: LayoutDirect, Kernel: k, BS: bs, Count: max(count, 1), CPUs: 4, Disk: blk.Null{},
		DiskBytes: 64e9 / 4096 * 4096, PageCacheLimit: imx8PageCache >> 12, DirtyLimit: imx8PageCache / 10 >> 12}
}
