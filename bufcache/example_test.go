package bufcache_test

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// The same 512e disk opened under the two set_init_blocksize policies: the
// "simplified" kernel builds 8 buffer heads per page, the grow policy one.
func ExampleMachine_Open() {
	for _, p := range blocksize.Policies() {
		m, _ := bufcache.NewMachine(bufcache.Config{InitBlocksize: p})
		disk, _ := blk.NewMemDisk("sda", 1<<30, 512)
		d, _ := m.Open(disk, bufcache.DeviceOptions{})
		cpu := m.CPU(0)
		bh, _ := d.Getblk(cpu, 0, d.BlockSize())
		n := 0
		for b := bh; ; b = b.Next() {
			n++
			if b.Next() == bh {
				break
			}
		}
		ev := cpu.Events()
		fmt.Printf("%-7s block size %4d: %d buffer heads per page, %d allocated\n",
			p, d.BlockSize(), n, ev[bufcache.EvBHAlloc])
		bufcache.Brelse(cpu, bh)
	}
	// Output:
	// grow    block size 4096: 1 buffer heads per page, 1 allocated
	// logical block size  512: 8 buffer heads per page, 8 allocated
}

// What one __find_get_block costs, event by event: a hit in the per-CPU LRU
// versus the slow path through the page cache.
func ExampleBlockDevice_FindGetBlock() {
	m, _ := bufcache.NewMachine(bufcache.Config{})
	disk, _ := blk.NewMemDisk("loop0", 1<<30, 512)
	d, _ := m.Open(disk, bufcache.DeviceOptions{})
	cpu := m.CPU(0)
	bh, _ := d.Bread(cpu, 1, 4096)
	bufcache.Brelse(cpu, bh)

	before := cpu.Events()
	bh = d.FindGetBlock(cpu, 1, 4096)
	fmt.Println("LRU hit:  ", cpu.Events().Sub(before))
	bufcache.Brelse(cpu, bh)

	before = cpu.Events()
	bh = d.FindGetBlockSlow(cpu, 1)
	fmt.Println("slow path:", cpu.Events().Sub(before))
	bufcache.Brelse(cpu, bh)
	// Output:
	// LRU hit:   mark-accessed=1 bh-gets=1 lru-lookups=1 lru-compares=1 lru-hits=1
	// slow path: ring-walks=1 index-lookups=1 index-levels=1 private-locks=1 folio-gets=1 folio-puts=1 mark-accessed=1 bh-gets=1
}
