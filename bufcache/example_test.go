package bufcache_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// A buffered write, its writeback and its price: 8 KiB written at 4 KiB
// through the page cache, fsync's writeback to an SSD behind a request
// queue, and the bill. A hardware profile prices the CPU's events
// (timing.Profile.SimNS: CPU time only); the disk's service time is the
// queue's (blk.Queue.BusyNS: the two bios merged into one request of
// 8 KiB, 20 µs + 20.48 µs). Here the two add up: one CPU waits for a
// synchronous fsync (a workload of several CPUs overlaps them: engine.Run).
func Example_writeSyncPrice() {
	m, err := bufcache.NewMachine(bufcache.Config{}) // one CPU, the grow policy
	if err != nil {
		log.Fatal(err)
	}
	store, err := blk.NewMemDisk("sda", 64<<20, 512) // 64 MiB of 512-byte sectors: the data
	if err != nil {
		log.Fatal(err)
	}
	ssd := blk.SSD{MBps: 400, LatencyNS: 20000} // 400 MB/s, 20 µs a request
	disk, err := blk.NewQueue("sda", store, ssd, blk.DefaultLimits(512, 512))
	if err != nil {
		log.Fatal(err)
	}
	dev, err := m.Open(disk, bufcache.DeviceOptions{}) // set_init_blocksize: 4096
	if err != nil {
		log.Fatal(err)
	}
	cpu := m.CPU(0)

	data := bytes.Repeat([]byte{0xab}, 8192)
	it, err := bufcache.NewUserBuf(data, 0, m.PageSize()).Iter(0, uint64(len(data)))
	if err != nil {
		log.Fatal(err)
	}
	n, err := dev.Write(cpu, 4096, it) // write(2): two dirty pages, no I/O yet
	if err != nil {
		log.Fatal(err)
	}
	if err := dev.SyncBlockdev(cpu); err != nil { // fsync: the pages written back
		log.Fatal(err)
	}
	back := make([]byte, len(data))
	if _, err := store.ReadAt(back, 4096); err != nil {
		log.Fatal(err)
	}

	ev := cpu.Events()
	cpuNS := timing.X86Server().SimNS(ev, 0)
	diskNS := disk.BusyNS()
	fmt.Printf("wrote %d bytes in %d bios, on disk: %v\n", n, ev[bufcache.EvBioSubmit], bytes.Equal(back, data))
	fmt.Printf("cpu %.0f ns + disk %.0f ns = %.0f ns\n", cpuNS, diskNS, cpuNS+diskNS)
	// Output:
	// wrote 8192 bytes in 2 bios, on disk: true
	// cpu 2426 ns + disk 40480 ns = 42906 ns
}

// The same 512e disk opened under the two set_init_blocksize policies: the
// "simplified" kernel builds 8 buffer heads per page, the grow policy one.
func ExampleMachine_Open() {
	for _, p := range blocksize.Policies() {
		m, err := bufcache.NewMachine(bufcache.Config{InitBlocksize: p})
		if err != nil {
			log.Fatal(err)
		}
		disk, err := blk.NewMemDisk("sda", 1<<30, 512)
		if err != nil {
			log.Fatal(err)
		}
		d, err := m.Open(disk, bufcache.DeviceOptions{})
		if err != nil {
			log.Fatal(err)
		}
		cpu := m.CPU(0)
		bh, err := d.Getblk(cpu, 0, d.BlockSize())
		if err != nil {
			log.Fatal(err)
		}
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
	m, err := bufcache.NewMachine(bufcache.Config{})
	if err != nil {
		log.Fatal(err)
	}
	disk, err := blk.NewMemDisk("loop0", 1<<30, 512)
	if err != nil {
		log.Fatal(err)
	}
	d, err := m.Open(disk, bufcache.DeviceOptions{})
	if err != nil {
		log.Fatal(err)
	}
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 1, 4096)
	if err != nil {
		log.Fatal(err)
	}
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
