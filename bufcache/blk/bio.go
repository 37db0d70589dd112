package blk

import (
	"fmt"
	"math"

	"github.com/bhsim/bhsim/internal/enum"
)

// Op is a bio or request operation (REQ_OP_READ, REQ_OP_WRITE,
// REQ_OP_FLUSH).
type Op uint8

const (
	// OpRead reads sectors from the device into the bio's vectors.
	OpRead Op = iota
	// OpWrite writes the bio's vectors to the device.
	OpWrite
	// OpFlush is the operation of the flush requests the block layer makes
	// for preflush and FUA bios on a queue with a volatile write cache
	// (blk-flush's flush_rq, REQ_OP_FLUSH). Bios never carry it: CheckBio
	// refuses it; it appears in traces.
	OpFlush
)

// opNames names the operations for String.
var opNames = enum.New[Op]("op", []string{OpRead: "read", OpWrite: "write", OpFlush: "flush"}...)

// String returns "read", "write" or "flush" ("op(n)" for another value).
func (o Op) String() string { return opNames.String(o) }

// BioFlags are the request flags of a bio (the REQ_* bits of bi_opf beside
// the operation, include/linux/blk_types.h, v6.18). A submitter sets them in
// [Bio.Flags] after [Bio.Reset], which clears them. The block layer reads them
// as the kernel does:
//
//   - FlagPreflush and FlagFUA are the flush flags. On a queue with a volatile
//     write cache ([Limits.WriteCache]) a preflush bio becomes a flush request
//     before its data, and a FUA bio's data is made durable by the request
//     itself ([Limits.FUA]) or by a flush after it; on a queue without one
//     both flags are dropped, and an empty preflush bio completes at once
//     (submit_bio_noacct). A zero-length write with FlagPreflush is a flush:
//     the only bio that may be empty. Bios with either flag never merge
//     (REQ_NOMERGE_FLAGS).
//   - FlagSync and FlagIdle mark synchronous I/O (fsync's writeback is
//     REQ_SYNC; O_DIRECT writes are REQ_SYNC|REQ_IDLE). Write throttling
//     ([Limits.WriteThrottleDepth]) spares writes that carry both.
//   - FlagRahead marks a readahead read (REQ_RAHEAD); it is traced, nothing
//     else.
//
// Flags do not change how a bio is split or how its data moves.
type BioFlags uint32

const (
	// FlagSync is REQ_SYNC.
	FlagSync BioFlags = 1 << iota
	// FlagPreflush is REQ_PREFLUSH: flush the device's volatile cache before
	// this bio's data (if any).
	FlagPreflush
	// FlagFUA is REQ_FUA: this bio's data is durable when it completes.
	FlagFUA
	// FlagRahead is REQ_RAHEAD: a readahead read, which may fail without harm.
	FlagRahead
	// FlagIdle is REQ_IDLE: the submitter has no more I/O coming soon.
	FlagIdle
)

// bioFlagNames names the flags for String, lowest bit first.
var bioFlagNames = enum.NewFlags[BioFlags]("sync", "preflush", "fua", "rahead", "idle")

// String lists the set flags joined by "|" ("sync|preflush"), "0" for none.
func (f BioFlags) String() string { return bioFlagNames.String(f) }

// flushFlags are the flags that send a bio through the flush machinery.
const flushFlags = FlagPreflush | FlagFUA

// IsFlush reports whether b is an empty preflush write: a cache flush with no
// data (blkdev_issue_flush's bio).
func (b *Bio) IsFlush() bool { return b.Op == OpWrite && b.size == 0 && b.Flags&FlagPreflush != 0 }

// Vec is one bio segment (struct bio_vec): Len bytes of memory starting Offset
// bytes into page frame PFN. Data is the memory moved and is nil in
// metadata-only mode, where only the length matters.
//
// PFN and Offset are the simulated physical location of the memory (bv_page and
// bv_offset). The request layer uses them to count DMA segments: two vectors
// are physically contiguous when the second starts at the byte the first ends
// on, that is on the same frame at the first one's Offset+Len, or on the next
// frame at offset 0 when the first ends at the page end. A vector whose PFN is
// [NoPFN] is contiguous with nothing.
type Vec struct {
	Data   []byte
	Len    uint32
	PFN    uint64
	Offset uint32
}

// NoPFN is the page frame of memory whose physical location is unknown: a
// vector on NoPFN is never physically contiguous with another one. AddVec
// gives its vectors NoPFN.
const NoPFN = ^uint64(0)

// MaxInlineVecs is the number of segments a Bio holds without allocating
// (the kernel's BIO_INLINE_VECS is 4; submit_bh needs one).
const MaxInlineVecs = 4

// Bio models struct bio: one I/O of contiguous sectors. Build it with Reset and
// AddVec or AddPage, submit it with [Device.Submit] or [SubmitBio]. The device calls EndIO exactly once,
// after setting Err (nil on success). Private belongs to the submitter (submit_bh
// keeps the buffer_head there, as bi_private).
//
// A Bio is reusable: Reset clears it without freeing its vectors, inline or
// grown past MaxInlineVecs, so a submitter can keep a free list and allocate
// nothing per I/O once its bios have held the most segments it adds.
type Bio struct {
	Op Op
	// Flags are the bio's REQ_* flags; Reset clears them.
	Flags  BioFlags
	Sector uint64
	Err    error
	// EndIO is bi_end_io. It must be set before Submit.
	EndIO   func(*Bio)
	Private any

	vecs   []Vec
	inline [MaxInlineVecs]Vec
	size   uint32
	data   bool // some vector carries data (a metadata-only bio's have none)
	// leaveNS is when the part being submitted left the queue's throttle
	// stage (Queue.SetThrottle), in simulated nanoseconds.
	leaveNS float64
}

// Reset prepares b for a new I/O of op at sector, with no vectors and no
// flags. A vector array grown past MaxInlineVecs by an earlier I/O is kept,
// cleared, for the next one.
func (b *Bio) Reset(op Op, sector uint64) {
	b.Op, b.Flags, b.Sector, b.Err, b.EndIO, b.Private, b.leaveNS = op, 0, sector, nil, nil, nil, 0
	switch {
	case cap(b.vecs) > MaxInlineVecs: // its own grown array: a copied Bio's vecs has the capacity of an inline array
		clear(b.inline[:])
		clear(b.vecs)
		b.vecs = b.vecs[:0]
	case cap(b.vecs) > 0 && &b.vecs[:1][0] == &b.inline[0]:
		// The usual case: only the vectors the last I/O used hold anything
		// (a Vec holds a pointer, so clearing one costs write barriers
		// while the collector runs), and only a bio that carried data has
		// pointers to drop: a metadata-only bio's vectors hold lengths and
		// frame numbers, which nothing reads past len(b.vecs) and the next
		// add overwrites. (clear of a pointerful slice is a call to
		// memclrHasPointers, dozens of instructions per bio.)
		if b.data {
			clear(b.inline[:len(b.vecs)])
		}
		b.vecs = b.inline[:0]
	default: // new, or a copy whose vecs are another Bio's inline array
		clear(b.inline[:])
		b.vecs = b.inline[:0]
	}
	b.size, b.data = 0, false
}

// AddVec appends a segment of n bytes whose physical location is unknown (its
// PFN is NoPFN, so it never coalesces with a neighbour into one DMA segment).
// data is the memory (len(data) must equal n; it panics otherwise, as the
// submitter builds both from one buffer) or nil for metadata-only I/O. It
// reports false, adding nothing, if the bio would pass 4 GiB − 1 bytes
// (bi_size is 32 bits). It allocates only past MaxInlineVecs segments. O(1)
// amortised.
func (b *Bio) AddVec(data []byte, n uint32) bool {
	return b.add(Vec{Data: data, Len: n, PFN: NoPFN})
}

// AddPage appends a segment of n bytes that starts offset bytes into page frame
// pfn: bio_add_page (v5.10) with the page named by its frame number. data is
// the memory (len(data) must equal n; it panics otherwise) or nil for
// metadata-only I/O. Unlike the kernel, AddPage does not fold a physically
// contiguous page into the previous vector; the request layer finds contiguity
// when it counts segments, which gives the same count. Like bio_add_page it
// reports false, adding nothing, if the bio would pass 4 GiB − 1 bytes (a
// submitter of at most BIO_MAX_VECS pages never gets there). It allocates only
// past MaxInlineVecs segments. O(1) amortised.
func (b *Bio) AddPage(data []byte, n uint32, pfn uint64, offset uint32) bool {
	return b.add(Vec{Data: data, Len: n, PFN: pfn, Offset: offset})
}

// add appends v unless the bio's 32-bit size would overflow. A data slice
// whose length differs from the segment's is a programming error of the
// submitter (bufcache builds both from one buffer).
func (b *Bio) add(v Vec) bool {
	if v.Data != nil && uint32(len(v.Data)) != v.Len {
		panic(fmt.Sprintf("blk: a %d-byte segment with %d bytes of data", v.Len, len(v.Data)))
	}
	if v.Len > math.MaxUint32-b.size {
		return false
	}
	if b.vecs == nil {
		b.vecs = b.inline[:0]
	}
	// The fields one by one, not v whole: v arrives in registers, and a
	// copy of the struct would store them and load them back in wider
	// moves, which the CPU cannot forward from the narrower stores (a stall
	// that was a bio's costliest instruction).
	n := len(b.vecs)
	if n == cap(b.vecs) {
		b.vecs = append(b.vecs, Vec{})
	} else {
		b.vecs = b.vecs[:n+1]
	}
	d := &b.vecs[n]
	d.Data, d.Len, d.PFN, d.Offset = v.Data, v.Len, v.PFN, v.Offset
	b.size += v.Len
	b.data = b.data || v.Data != nil
	return true
}

// Vecs returns the bio's segments in order.
func (b *Bio) Vecs() []Vec { return b.vecs }

// Size returns the bio's length in bytes (bi_iter.bi_size).
func (b *Bio) Size() uint32 { return b.size }

// Sectors returns the bio's length in 512-byte sectors.
func (b *Bio) Sectors() uint64 { return uint64(b.size) >> SectorShift }

// Complete sets the bio's status and calls its EndIO: bio_endio.
func (b *Bio) Complete(err error) {
	b.Err = err
	b.EndIO(b)
}

// span is bytes [d, d+n) of the vector v.
type span struct {
	v    *Vec
	d, n uint32
}

// spanIter walks the vector spans that cover a byte range of a bio, skipping
// empty vectors. The current span is valid after next returns true.
type spanIter struct {
	span
	vecs []Vec
	i    int
	skip uint32 // bytes of vecs[i] before the range
	left uint32 // bytes of the range not yet returned
}

// spans returns an iterator over bytes [off, off+n) of b, which must lie
// within the bio. O(number of vectors before off).
func (b *Bio) spans(off, n uint32) spanIter {
	it := spanIter{vecs: b.vecs, left: n}
	for it.i < len(it.vecs) && off >= it.vecs[it.i].Len {
		off -= it.vecs[it.i].Len
		it.i++
	}
	it.skip = off
	return it
}

// next moves to the next non-empty span of the range.
func (it *spanIter) next() bool {
	for it.left > 0 && it.i < len(it.vecs) {
		v := &it.vecs[it.i]
		n := min(v.Len-it.skip, it.left)
		it.span = span{v: v, d: it.skip, n: n}
		it.i, it.skip, it.left = it.i+1, 0, it.left-n
		if n > 0 {
			return true
		}
	}
	return false
}
