package timing_test

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// The library in a dozen calls: a machine, a disk, the device opened with
// the kernel's block-size policy, a buffered write, writeback, a read back
// (the disk is the data oracle), a buffer looked up through the per-CPU LRU,
// and the events priced by a hardware profile.
func Example_quickStart() {
	m, _ := bufcache.NewMachine(bufcache.Config{CPUs: 2}) // grow policy, 16-slot LRU
	disk, _ := blk.NewMemDisk("sda", 64<<20, 512)         // 64 MiB, 512-byte sectors
	dev, _ := m.Open(disk, bufcache.DeviceOptions{})      // set_init_blocksize: 4096
	cpu := m.CPU(0)

	data := make([]byte, 8192)
	for i := range data {
		data[i] = byte(i)
	}
	it, _ := bufcache.NewUserBuf(data, 0, m.PageSize()).Iter(0, uint64(len(data)))
	n, _ := dev.Write(cpu, 4096, it) // write(2) of 8 KiB at 4 KiB
	_ = dev.SyncBlockdev(cpu)        // fsync: one bio per dirty buffer

	back := make([]byte, 8192)
	_, _ = disk.ReadAt(back, 4096) // what the disk holds
	bh := dev.FindGetBlock(cpu, 1, dev.BlockSize())
	fmt.Printf("block size %d, wrote %d bytes, disk agrees: %v, block 1 cached: %v\n",
		dev.BlockSize(), n, string(back) == string(data), bh != nil)
	bufcache.Brelse(cpu, bh)

	ev := cpu.Events()
	p := timing.X86Server()
	fmt.Printf("bios %d, buffer heads %d, simulated %.0f ns on %s\n",
		ev[bufcache.EvBioSubmit], ev[bufcache.EvBHAlloc], p.SimNS(ev, 0), p.Name)
	// Output:
	// block size 4096, wrote 8192 bytes, disk agrees: true, block 1 cached: true
	// bios 2, buffer heads 2, simulated 2523 ns on x86-server
}
