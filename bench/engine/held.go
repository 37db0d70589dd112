package engine

import (
	"encoding/binary"
	"io"
	"sync/atomic"

	"github.com/bhsim/bhsim/bench/source"
)

// maxHeldBytes bounds the records TraceWorkload keeps in memory after its
// first pass: 40 MiB of them encoded, about five million random 4 KiB
// records (heldRecords); a longer trace is read again by Run.
const maxHeldBytes = 40 << 20

// heldChunk is the size of a chunk of held records, in bytes: records are
// appended to a chunk until the next might not fit, so that holding a
// trace never copies what it holds.
const heldChunk = 1 << 20

// maxHeldRecord is the most bytes one record takes held: its head, two
// bytes of kind and flags, and five varints of at most ten bytes.
const maxHeldRecord = 1 + 2 + 5*binary.MaxVarintLen64

// The bits of a held record's head byte: its kind, whether its offset and
// length are multiples of 512 (held in sectors), and its flags. A kind of
// heldRawKind is followed by the kind and flags as two bytes of their own,
// for a kind or flags too large for the head.
const (
	heldKindBits  = 0b0000_0111
	heldSectors   = 0b0000_1000
	heldFlagShift = 4
	heldRawKind   = heldKindBits
)

// heldRecords are the records of a trace kept in memory, encoded: each
// record is a head byte (heldKindBits), then as varints its line and its
// time as differences from the record before it in its chunk (zig-zag, as
// either may go back), its CPU, and its offset and length (in sectors
// when both are multiples of 512). A random 4 KiB record over a 1 GiB
// device takes 8 bytes (source.IO takes 56). Chunks are independent: each
// starts from line 0 and time 0, so that the chunks of a trace's parts,
// held at once, join by concatenation.
//
// budget is the bytes that may still be held, shared by the parts of a
// trace read at once: a chunk is charged for the bytes it holds when it is
// full and when its part ends (close), and a new chunk is begun only while
// the budget is not spent, so that a trace is held when its records' bytes
// fit the budget, read whole or in any number of parts (but for the few
// bytes more the first record of each chunk takes), and the memory held is
// at most the budget and a chunk per part.
type heldRecords struct {
	chunks [][]byte
	budget *atomic.Int64
	// line and at are the last record's in the last chunk.
	line int
	at   uint64
}

// add appends r, and reports false when it does not fit: the budget is
// spent and r needs a new chunk. Amortised O(1); allocates a chunk every
// heldChunk bytes.
func (h *heldRecords) add(r source.IO) bool {
	n := len(h.chunks)
	if n == 0 || cap(h.chunks[n-1])-len(h.chunks[n-1]) < maxHeldRecord {
		if n > 0 {
			h.budget.Add(-int64(len(h.chunks[n-1])))
		}
		if h.budget.Load() <= 0 {
			return false
		}
		h.chunks = append(h.chunks, make([]byte, 0, heldChunk))
		h.line, h.at, n = 0, 0, n+1
	}
	b := h.chunks[n-1]
	head := byte(r.Kind)
	if r.Kind >= heldRawKind || r.Flags >= 1<<(8-heldFlagShift) {
		head = heldRawKind
	} else {
		head |= byte(r.Flags) << heldFlagShift
	}
	off, length := r.Offset, r.Length
	if off%512 == 0 && length%512 == 0 {
		head |= heldSectors
		off, length = off/512, length/512
	}
	b = append(b, head)
	if head&heldKindBits == heldRawKind {
		b = append(b, byte(r.Kind), byte(r.Flags))
	}
	b = binary.AppendVarint(b, int64(r.Line-h.line))
	b = binary.AppendVarint(b, int64(r.At-h.at))
	b = binary.AppendUvarint(b, uint64(r.CPU))
	b = binary.AppendUvarint(b, off)
	b = binary.AppendUvarint(b, length)
	h.chunks[n-1] = b
	h.line, h.at = r.Line, r.At
	return true
}

// close ends the records of a part: its last chunk is charged, and copied
// to one of its length so that the memory it holds is what it uses. It
// reports false when the budget is overspent: the trace's records do not
// fit it. O(heldChunk).
func (h *heldRecords) close() bool {
	n := len(h.chunks)
	if n == 0 {
		return h.budget.Load() >= 0
	}
	last := h.chunks[n-1]
	h.chunks[n-1] = append([]byte(nil), last...)
	return h.budget.Add(-int64(len(last))) >= 0
}

// join appends the chunks of o, records held after h's, to h.
func (h *heldRecords) join(o *heldRecords) { h.chunks = append(h.chunks, o.chunks...) }

// heldReader replays held records; each reader has its own position, so
// that the miss-ratio curve's runs read them at once.
type heldReader struct {
	held  *heldRecords
	chunk int
	pos   int
	line  int
	at    uint64
}

// Next implements source.IOReader. O(1); allocates nothing.
func (h *heldReader) Next() (source.IO, error) {
	cs := h.held.chunks
	if h.chunk < len(cs) && h.pos == len(cs[h.chunk]) {
		h.chunk, h.pos, h.line, h.at = h.chunk+1, 0, 0, 0
	}
	if h.chunk == len(cs) {
		return source.IO{}, io.EOF
	}
	b := cs[h.chunk][h.pos:]
	head := b[0]
	i := 1
	kind, flags := source.IOKind(head&heldKindBits), source.IOFlags(head>>heldFlagShift)
	if head&heldKindBits == heldRawKind {
		kind, flags = source.IOKind(b[1]), source.IOFlags(b[2])
		i = 3
	}
	dl, n := binary.Varint(b[i:])
	i += n
	da, n := binary.Varint(b[i:])
	i += n
	cpu, n := binary.Uvarint(b[i:])
	i += n
	off, n := binary.Uvarint(b[i:])
	i += n
	length, n := binary.Uvarint(b[i:])
	i += n
	if head&heldSectors != 0 {
		off, length = off*512, length*512
	}
	h.line += int(dl)
	h.at += uint64(da)
	h.pos += i
	// One literal, returned as it is built: a record built in a temporary
	// and copied out is loaded wide just after its narrow stores.
	return source.IO{Kind: kind, Flags: flags, Offset: off, Length: length, CPU: int(cpu), At: h.at, Line: h.line}, nil
}
