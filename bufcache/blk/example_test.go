package blk_test

import (
	"fmt"
	"os"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// writeMiB plugs a 1 MiB sequential write as bios of bsize bytes, page i of
// the write on page frame 1000+2i (page-cache pages are rarely contiguous),
// and returns the queue after the plug is finished.
func writeMiB(bsize uint32, acct blk.SegmentAccounting) *blk.Queue {
	disk, err := blk.NewMemDisk("sda", 1<<30, 512)
	if err != nil {
		panic(err)
	}
	lim := blk.DefaultLimits(512, 4096)
	lim.SegmentAccounting = acct
	q, err := blk.NewQueue("sda", disk, blk.WD8003FFBX(), lim)
	if err != nil {
		panic(err)
	}
	q.EnableTrace(4)
	var plug blk.Plug
	plug.Start()
	for pos := uint32(0); pos < 1<<20; pos += bsize {
		b := new(blk.Bio)
		b.Reset(blk.OpWrite, uint64(pos)>>blk.SectorShift)
		b.AddPage(nil, bsize, 1000+2*uint64(pos/4096), pos%4096)
		b.EndIO = func(*blk.Bio) {}
		blk.SubmitBio(&plug, q, b)
	}
	if err := plug.Finish(); err != nil {
		panic(err)
	}
	return q
}

// A 1 MiB sequential write through a plug onto the WD8003FFBX model, as the
// buffer cache submits it with 512-byte and with 4 KiB buffers. With the
// kernel's per-bio segment accounting the 512-byte bios stop at 128 bios
// (64 KiB) per request; counting DMA segments instead, eight bios of a page
// coalesce into one segment and the requests grow to 512 KiB. The busy time
// includes one average seek and half a rotation for the first request.
func Example() {
	for _, tc := range []struct {
		bsize uint32
		acct  blk.SegmentAccounting
	}{
		{512, blk.SegmentsPerBio},
		{512, blk.SegmentsCoalesced},
		{4096, blk.SegmentsPerBio},
	} {
		q := writeMiB(tc.bsize, tc.acct)
		st := q.Stats()
		fmt.Printf("%4d-byte bios, %-9s: %4d bios, %2d requests, %4d merges, busy %.1f ms\n",
			tc.bsize, tc.acct, st.Write.Bios, st.Write.Requests, st.Write.Merges, st.BusyNS/1e6)
	}
	fmt.Println("the requests of the 4 KiB write:")
	if err := writeMiB(4096, blk.SegmentsPerBio).WriteTrace(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	//  512-byte bios, per-bio  : 2048 bios, 16 requests, 2032 merges, busy 17.3 ms
	//  512-byte bios, coalesced: 2048 bios,  2 requests, 2046 merges, busy 17.1 ms
	// 4096-byte bios, per-bio  :  256 bios,  2 requests,  254 merges, busy 17.1 ms
	// the requests of the 4 KiB write:
	// sda 1 D W 0 + 1024 [bios 128, segs 128] 14907.7 us
	// sda 2 D W 1024 + 1024 [bios 128, segs 128] 2241.0 us
}

// A tracer that counts, on a queue that reports only block_bio_queue and
// block_rq_issue, as a tracing instance with only those two events
// enabled: eight 4 KiB bios of a plugged sequential write are queued, and
// merge into one request. The merges, the plug's events and the
// completion are not reported.
func ExampleQueue_SetTracerKinds() {
	disk, err := blk.NewMemDisk("loop0", 1<<30, 512)
	if err != nil {
		panic(err)
	}
	q, err := blk.NewQueue("loop0", disk, blk.Null{}, blk.LoopLimits(512))
	if err != nil {
		panic(err)
	}
	counts := map[blk.TraceKind]int{}
	q.SetTracerKinds(blk.TraceFunc(func(e blk.TraceEvent) { counts[e.Kind]++ }),
		blk.TraceKindsOf(blk.TraceBioQueue, blk.TraceRqIssue))
	var plug blk.Plug
	plug.Start()
	for i := range uint64(8) {
		b := new(blk.Bio)
		b.Reset(blk.OpWrite, i*8)
		b.AddPage(nil, 4096, 100+i, 0)
		b.EndIO = func(*blk.Bio) {}
		blk.SubmitBio(&plug, q, b)
	}
	if err := plug.Finish(); err != nil {
		panic(err)
	}
	for _, k := range []blk.TraceKind{blk.TraceBioQueue, blk.TraceBioBackmerge, blk.TraceRqIssue, blk.TraceRqComplete} {
		fmt.Printf("%s: %d\n", k, counts[k])
	}
	// Output:
	// block_bio_queue: 8
	// block_bio_backmerge: 0
	// block_rq_issue: 1
	// block_rq_complete: 0
}
