package engine

import (
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache"
)

// readAheadBatch is how many records a readAhead reads at a time.
const readAheadBatch = 16

// readAhead reads a workload's records readAheadBatch at a time and, before
// it hands out the first of a batch, has the device read what the batch's
// page-cache lookups will read (bufcache.BlockDevice.Prefetch): on a random
// trace over a large device each lookup's two cache misses of the host
// (the index slot, the folio) would otherwise come one after the other,
// record after record. It changes no record, their order or when an
// error of the reader is seen (after the records before it), so a run's
// results are those of the reader read one record at a time.
type readAhead struct {
	rd   source.IOReader
	dev  *bufcache.BlockDevice
	recs [readAheadBatch]source.IO
	offs [readAheadBatch]uint64
	i, n int
	// err is what rd returned after recs[:n], nil while it has more.
	err error
	// sink keeps what Prefetch returns, a value with no meaning.
	sink int32
}

// Next implements source.IOReader.
func (r *readAhead) Next() (source.IO, error) {
	if r.i == r.n {
		if r.err != nil {
			return source.IO{}, r.err
		}
		r.fill()
		if r.n == 0 {
			return source.IO{}, r.err
		}
	}
	rec := r.recs[r.i]
	r.i++
	return rec, nil
}

// fill reads the next batch, up to an error or the end, and prefetches its
// records' pages.
func (r *readAhead) fill() {
	r.i, r.n = 0, 0
	for r.n < len(r.recs) {
		rec, err := r.rd.Next()
		if err != nil {
			r.err = err
			break
		}
		r.recs[r.n], r.offs[r.n] = rec, rec.Offset
		r.n++
	}
	r.sink += r.dev.Prefetch(r.offs[:r.n])
}

// backlog prefetches the next records of c, whose next record is about to
// run, when c holds more than a batch of them: a CPU waiting for a slow
// call (a read from the disk) gathers records that the other CPUs' runs
// leave far behind, whose prefetch at their reading has gone cold by their
// turn. It prefetches a batch when the previous one is used up.
func (r *readAhead) backlog(c *cpuState) {
	if c.near > 0 {
		c.near--
		return
	}
	live := c.pending.live()
	if len(live) <= readAheadBatch {
		return
	}
	for i := range readAheadBatch {
		r.offs[i] = live[i].Offset
	}
	r.sink += r.dev.Prefetch(r.offs[:])
	c.near = readAheadBatch - 1
}
