package timing_test

import (
	"fmt"
	"log"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// The library in a dozen calls: a machine, a disk, the device opened with
// the kernel's block-size policy, a buffered write, writeback, a read back
// (the disk is the data oracle), a buffer looked up through the per-CPU LRU,
// and the events priced by a hardware profile: CPU time (Profile.SimNS);
// bufcache's Example_writeSyncPrice adds a disk's.
func Example_quickStart() {
	m, err := bufcache.NewMachine(bufcache.Config{CPUs: 2}) // grow policy, 16-slot LRU
	if err != nil {
		log.Fatal(err)
	}
	disk, err := blk.NewMemDisk("sda", 64<<20, 512) // 64 MiB, 512-byte sectors
	if err != nil {
		log.Fatal(err)
	}
	dev, err := m.Open(disk, bufcache.DeviceOptions{}) // set_init_blocksize: 4096
	if err != nil {
		log.Fatal(err)
	}
	cpu := m.CPU(0)

	data := make([]byte, 8192)
	for i := range data {
		data[i] = byte(i)
	}
	it, err := bufcache.NewUserBuf(data, 0, m.PageSize()).Iter(0, uint64(len(data)))
	if err != nil {
		log.Fatal(err)
	}
	n, err := dev.Write(cpu, 4096, it) // write(2) of 8 KiB at 4 KiB
	if err != nil {
		log.Fatal(err)
	}
	if err := dev.SyncBlockdev(cpu); err != nil { // fsync: one bio per dirty buffer
		log.Fatal(err)
	}

	back := make([]byte, 8192)
	if _, err := disk.ReadAt(back, 4096); err != nil { // what the disk holds
		log.Fatal(err)
	}
	bh := dev.FindGetBlock(cpu, 1, dev.BlockSize()) // nil when not cached
	fmt.Printf("block size %d, wrote %d bytes, disk agrees: %v, block 1 cached: %v\n",
		dev.BlockSize(), n, string(back) == string(data), bh != nil)
	bufcache.Brelse(cpu, bh)

	ev := cpu.Events()
	p := timing.X86Server()
	fmt.Printf("bios %d, buffer heads %d, simulated CPU %.0f ns on %s (the MemDisk takes no time)\n",
		ev[bufcache.EvBioSubmit], ev[bufcache.EvBHAlloc], p.SimNS(ev, 0), p.Name)
	// Output:
	// block size 4096, wrote 8192 bytes, disk agrees: true, block 1 cached: true
	// bios 2, buffer heads 2, simulated CPU 2523 ns on x86-server (the MemDisk takes no time)
}
