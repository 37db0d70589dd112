package engine

import (
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache"
)

// readBatch is how many records a batchReader reads at a time.
const readBatch = 16

// batchReader reads a workload's records readBatch at a time and, before
// it hands out the first of a batch, has the device warm the host's caches
// with what the batch's page-cache lookups will read
// (bufcache.BlockDevice.HostPrefetch): on a random trace over a large
// device each lookup's cache misses of the host (the index slot, the
// folio's frame) would otherwise come one after the other, record after
// record. This is the simulator's speed, not the kernel's readahead, which
// the model simulates in bufcache. It changes no record, their order or
// when an error of the reader is seen (after the records before it), so a
// run's results are those of the reader read one record at a time; but it
// asks its reader for up to readBatch−1 records more than the engine needs
// yet, so a trace on a slow pipe starts when its first 16 records (or its
// end) have arrived.
type batchReader struct {
	rd   source.IOReader
	dev  *bufcache.BlockDevice
	recs [readBatch]source.IO
	offs [readBatch]uint64
	i, n int
	// err is what rd returned after recs[:n], nil while it has more.
	err error
}

// next returns the next record, as source.IOReader's Next would, but in
// place: valid until the batch after it is read. Copying a record stored
// long before, rather than one just returned in registers and stored field
// by field, spares the copy's wide loads a wait for the narrow stores.
func (r *batchReader) next() (*source.IO, error) {
	if r.i == r.n {
		if r.err != nil {
			return nil, r.err
		}
		r.fill()
		if r.n == 0 {
			return nil, r.err
		}
	}
	r.i++
	return &r.recs[r.i-1], nil
}

// fill reads the next batch, up to an error or the end, and prefetches its
// records' pages.
func (r *batchReader) fill() {
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
	r.dev.HostPrefetch(r.offs[:r.n])
}

// backlog prefetches the next records of c, whose next record is about to
// run, when c holds more than a batch of them: a CPU waiting for a slow
// call (a read from the disk) gathers records that the other CPUs' runs
// leave far behind, whose prefetch when they were read has gone cold by
// their turn. It prefetches a batch when the previous one is used up.
func (r *batchReader) backlog(c *cpuState) {
	if c.near > 0 {
		c.near--
		return
	}
	live := c.pending.live()
	if len(live) <= readBatch {
		return
	}
	for i := range readBatch {
		r.offs[i] = live[i].Offset
	}
	r.dev.HostPrefetch(r.offs[:])
	c.near = readBatch - 1
}
