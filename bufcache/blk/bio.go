package blk

import "fmt"

// Op is a bio operation (REQ_OP_READ, REQ_OP_WRITE).
type Op uint8

const (
	// OpRead reads sectors from the device into the bio's vectors.
	OpRead Op = iota
	// OpWrite writes the bio's vectors to the device.
	OpWrite
)

// String returns "read" or "write".
func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Vec is one bio segment (struct bio_vec): Len bytes of a page. Data is the memory
// moved and is nil in metadata-only mode, where only the length matters.
type Vec struct {
	Data []byte
	Len  uint32
}

// MaxInlineVecs is the number of segments a Bio holds without allocating
// (the kernel's BIO_INLINE_VECS is 4; submit_bh needs one).
const MaxInlineVecs = 4

// Bio models struct bio: one I/O of contiguous sectors. Build it with Reset and
// AddVec, submit it with [Device.Submit]. The device calls EndIO exactly once,
// after setting Err (nil on success). Private belongs to the submitter (submit_bh
// keeps the buffer_head there, as bi_private).
//
// A Bio is reusable: Reset clears it without freeing its inline vectors, so a
// submitter can keep a free list and allocate nothing per I/O.
type Bio struct {
	Op     Op
	Sector uint64
	Err    error
	// EndIO is bi_end_io. It must be set before Submit.
	EndIO   func(*Bio)
	Private any

	vecs   []Vec
	inline [MaxInlineVecs]Vec
	size   uint32
}

// Reset prepares b for a new I/O of op at sector, with no vectors.
func (b *Bio) Reset(op Op, sector uint64) {
	b.Op, b.Sector, b.Err, b.EndIO, b.Private = op, sector, nil, nil, nil
	clear(b.inline[:])
	b.vecs = b.inline[:0]
	b.size = 0
}

// AddVec appends a segment of n bytes. data is the memory (len(data) must equal n)
// or nil for metadata-only I/O. It allocates only past MaxInlineVecs segments.
func (b *Bio) AddVec(data []byte, n uint32) {
	if data != nil && uint32(len(data)) != n {
		panic(fmt.Sprintf("blk: AddVec with %d bytes of data for a %d-byte segment", len(data), n))
	}
	if b.vecs == nil {
		b.vecs = b.inline[:0]
	}
	b.vecs = append(b.vecs, Vec{Data: data, Len: n})
	b.size += n
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
