package md_test

import (
	"bytes"
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// Example builds a four-disk RAID6 like the Helios4's (two data and two parity
// chunks per row), writes one full stripe row and one lone 4 KiB page, reads
// them back and prints what the personality did.
func Example() {
	const chunk = 64 << 10
	var members []blk.Device
	for _, name := range []string{"sda1", "sdb1", "sdc1", "sdd1"} {
		d, err := blk.NewMemDisk(name, 4<<20, 512)
		if err != nil {
			panic(err)
		}
		members = append(members, d)
	}
	a, err := md.New(md.Config{Level: md.Raid6, ChunkSize: chunk, Name: "md0"}, members)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s, %d MiB\n", a.Name(), a.Level(), a.Sectors()>>11)

	// io submits one bio and returns its error; MemDisks complete it inside Submit.
	io := func(op blk.Op, offset int, buf []byte) error {
		var b blk.Bio
		b.Reset(op, uint64(offset)>>blk.SectorShift)
		b.AddVec(buf, uint32(len(buf)))
		b.EndIO = func(*blk.Bio) {}
		a.Submit(&b)
		return b.Err
	}
	row := bytes.Repeat([]byte("full stripe row "), 2*chunk/16)
	page := bytes.Repeat([]byte("one page"), 4096/8)
	for _, w := range []struct {
		offset int
		data   []byte
	}{{0, row}, {2 * chunk, page}} {
		if err := io(blk.OpWrite, w.offset, w.data); err != nil {
			panic(err)
		}
		got := make([]byte, len(w.data))
		if err := io(blk.OpRead, w.offset, got); err != nil {
			panic(err)
		}
		fmt.Printf("%d bytes at %d read back intact: %t\n", len(w.data), w.offset, bytes.Equal(got, w.data))
	}
	s := a.Stats()
	fmt.Println("bios in:", s.BiosIn, "member bios:", s.MemberBios)
	fmt.Println("stripes:", s.Stripes, "full:", s.FullStripeWrites, "with pre-reads:", s.RMWWrites)
	fmt.Println("pre-reads:", s.MemberReads, "parity KiB:", s.ParityBytes>>10)
	// Output:
	// md0: raid6, 8 MiB
	// 131072 bytes at 0 read back intact: true
	// 4096 bytes at 131072 read back intact: true
	// bios in: 4 member bios: 71
	// stripes: 17 full: 16 with pre-reads: 1
	// pre-reads: 1 parity KiB: 136
}

// ExampleArray_SubmitPlugged writes one 128 KiB stripe row of a four-disk
// RAID6 as 512-byte bios, the way writeback submits a page's buffers when the
// block size is 512, once under a plug and once without, and prints what the
// array and its member queues did. Under the plug every stripe is handled once,
// when the plug is finished, as a full-stripe write, and each member receives
// one merged request; without it every bio is handled on its own and
// pre-reads.
func ExampleArray_SubmitPlugged() {
	const chunk = 64 << 10
	for _, plugged := range []bool{true, false} {
		var queues []*blk.Queue
		var members []blk.Device
		for _, name := range []string{"sda1", "sdb1", "sdc1", "sdd1"} {
			d, err := blk.NewMemDisk(name, 4<<20, 512)
			if err != nil {
				panic(err)
			}
			q, err := blk.NewQueue("", d, blk.Null{}, blk.DefaultLimits(512, 4096))
			if err != nil {
				panic(err)
			}
			queues, members = append(queues, q), append(members, q)
		}
		a, err := md.New(md.Config{Level: md.Raid6, ChunkSize: chunk}, members)
		if err != nil {
			panic(err)
		}
		var plug blk.Plug // a CPU's plug; blk.SubmitBio ignores it until started
		if plugged {
			plug.Start()
		}
		data := bytes.Repeat([]byte("buffer_head 512 "), 2*chunk/16)
		bios := make([]blk.Bio, len(data)/512)
		for i := range bios {
			b := &bios[i]
			b.Reset(blk.OpWrite, uint64(i))
			b.AddVec(data[i*512:(i+1)*512], 512)
			b.EndIO = func(b *blk.Bio) {
				if b.Err != nil {
					panic(b.Err)
				}
			}
			blk.SubmitBio(&plug, a, b)
		}
		if plugged {
			if err := plug.Finish(); err != nil {
				panic(err)
			}
		}
		s := a.Stats()
		var requests, reads uint64
		for _, q := range queues {
			requests += q.Stats().Write.Requests
			reads += q.Stats().Read.Requests
		}
		fmt.Printf("plugged=%t: %d bios, %d attaches, %d stripes (%d full), %d pre-reads, member write requests %d, read requests %d\n",
			plugged, s.BiosIn, s.StripeAttach, s.Stripes, s.FullStripeWrites, s.MemberReads, requests, reads)
	}
	// Output:
	// plugged=true: 256 bios, 256 attaches, 16 stripes (16 full), 0 pre-reads, member write requests 4, read requests 0
	// plugged=false: 256 bios, 256 attaches, 256 stripes (0 full), 512 pre-reads, member write requests 768, read requests 512
}

// Example_readBalance reads four chunks of a four-disk RAID10 near-2 (pairs
// sda1+sdb1 and sdc1+sdd1) over rotating disks, once under one plug and once
// chunk by chunk, and prints which members served them. Under the plug the
// second chunk of each pair finds its first mirror busy with the first chunk
// and goes to the idle one (raid10's read_balance); read one at a time, each
// read finds both mirrors idle and takes the first copy.
func Example_readBalance() {
	const chunk = 64 << 10
	for _, plugged := range []bool{true, false} {
		var queues []*blk.Queue
		var members []blk.Device
		for _, name := range []string{"sda1", "sdb1", "sdc1", "sdd1"} {
			d, err := blk.NewMemDisk(name, 4<<20, 512)
			if err != nil {
				panic(err)
			}
			q, err := blk.NewQueue(name, d, blk.WD8003FFBX(), blk.DefaultLimits(512, 4096))
			if err != nil {
				panic(err)
			}
			queues, members = append(queues, q), append(members, q)
		}
		a, err := md.New(md.Config{Level: md.Raid10Near2, ChunkSize: chunk}, members)
		if err != nil {
			panic(err)
		}
		var plug blk.Plug
		if plugged {
			plug.Start()
		}
		bios := make([]blk.Bio, 4)
		for i := range bios {
			b := &bios[i]
			b.Reset(blk.OpRead, uint64(i*chunk)>>blk.SectorShift)
			b.AddVec(nil, chunk) // metadata only: which member, not what data
			b.EndIO = func(b *blk.Bio) {
				if b.Err != nil {
					panic(b.Err)
				}
			}
			blk.SubmitBio(&plug, a, b)
		}
		if plugged {
			if err := plug.Finish(); err != nil {
				panic(err)
			}
		}
		fmt.Printf("plugged=%t:", plugged)
		for _, q := range queues {
			fmt.Printf(" %s %d", q.Name(), q.Stats().Read.Requests)
		}
		fmt.Println()
	}
	// Output:
	// plugged=true: sda1 1 sdb1 1 sdc1 1 sdd1 1
	// plugged=false: sda1 2 sdb1 0 sdc1 2 sdd1 0
}
