package engine

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/bench/source"
)

// maxHeldBytes bounds the memory TraceWorkload keeps a trace's records in
// after its first pass: 40 MiB, about five million records
// (heldRecords); a longer trace is read again by Run.
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
// held at once, join by concatenation. Each chunk is taken from budget
// (the bytes that may still be held) as it is begun, so that the parts of
// a trace read at once share maxHeldBytes.
type heldRecords struct {
	chunks [][]byte
	count  int
	budget *atomic.Int64
	// line and at are the last record's in the last chunk.
	line int
	at   uint64
}

// add appends r, and reports false when it does not fit: the budget has
// no chunk left for it. Amortised O(1); allocates a chunk every
// heldChunk bytes.
func (h *heldRecords) add(r source.IO) bool {
	n := len(h.chunks)
	if n == 0 || cap(h.chunks[n-1])-len(h.chunks[n-1]) < maxHeldRecord {
		if h.budget.Add(-heldChunk) < 0 {
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
	h.count++
	return true
}

// len is the number of records kept. O(1).
func (h *heldRecords) len() int { return h.count }

// join appends the chunks of o, records held after h's, to h.
func (h *heldRecords) join(o *heldRecords) {
	h.chunks = append(h.chunks, o.chunks...)
	h.count += o.count
	h.line, h.at = o.line, o.at
}

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
	rec := source.IO{Kind: source.IOKind(head & heldKindBits), Flags: source.IOFlags(head >> heldFlagShift)}
	if head&heldKindBits == heldRawKind {
		rec.Kind, rec.Flags = source.IOKind(b[1]), source.IOFlags(b[2])
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
	rec.Line, rec.At, rec.CPU, rec.Offset, rec.Length = h.line, h.at, int(cpu), off, length
	h.pos += i
	return rec, nil
}

// errPassStopped ends the pass over a part after an earlier part failed:
// its records no longer matter.
var errPassStopped = errors.New("engine: an earlier part of the trace failed")

// summarizeParts reads parts, consecutive parts of one trace
// (source.OpenTraceParts), to their ends and sums their records, and
// returns them too when together they fit maxHeld bytes held (in whole
// chunks; nil otherwise); it closes each part. One part is parsed in a
// goroutine of its own (source.Prefetch) while this one sums; several are
// each parsed and summed by a goroutine of their own, at once, and a part
// stops early once an earlier one has failed. The error is that of the
// first part that failed: the whole trace's first. O(records); memory
// O(maxHeld).
func summarizeParts(parts []*source.Trace, maxHeld int64) (source.TraceSummary, *heldRecords, error) {
	budget := new(atomic.Int64)
	budget.Store(maxHeld)
	if len(parts) == 1 {
		pf := source.Prefetch(parts[0]) // the parsing on another CPU than the summing
		defer pf.Close()
		return summarizeHolding(pf, budget, nil)
	}
	type result struct {
		sum  source.TraceSummary
		held *heldRecords
		err  error
	}
	res := make([]result, len(parts))
	var failed atomic.Int64 // the first part known to have failed
	failed.Store(int64(len(parts)))
	var wg sync.WaitGroup
	for k, p := range parts {
		wg.Go(func() {
			defer p.Close()
			r := &res[k]
			r.sum, r.held, r.err = summarizeHolding(p, budget, func() bool { return failed.Load() < int64(k) })
			for f := failed.Load(); r.err != nil && int64(k) < f; f = failed.Load() {
				if failed.CompareAndSwap(f, int64(k)) {
					break
				}
			}
		})
	}
	wg.Wait()
	var sum source.TraceSummary
	held := &heldRecords{budget: budget}
	for _, r := range res {
		if r.err != nil {
			return sum, nil, r.err
		}
		sum.Merge(r.sum)
		if r.held == nil {
			held = nil
		} else if held != nil {
			held.join(r.held)
		}
	}
	return sum, held, nil
}

// summarizeHolding reads t to its end and sums its records, and returns
// them held too when budget has room for them (nil otherwise). stopped,
// when not nil, is asked every stopEvery records whether to stop; then it
// returns errPassStopped. O(records); memory O(budget).
func summarizeHolding(t source.IOReader, budget *atomic.Int64, stopped func() bool) (source.TraceSummary, *heldRecords, error) {
	var s source.TraceSummary
	held := &heldRecords{budget: budget}
	for {
		if stopped != nil && s.Records%stopEvery == 0 && stopped() {
			return s, nil, errPassStopped
		}
		rec, err := t.Next()
		if err == io.EOF {
			return s, held, nil
		}
		if err != nil {
			return s, nil, err
		}
		s.Add(rec)
		if held != nil && !held.add(rec) {
			held = nil
		}
	}
}

// stopEvery is how many records a part's pass reads between asks whether
// an earlier part failed.
const stopEvery = 4096
