package bufcache

// The model's own memory: a page-cache lookup reads an index slot and then
// the folio it points to, two dependent loads that miss the host's caches
// when the accesses are random over a device larger than they hold (a 1 GiB
// device's 262,144 folios fill 32 MiB). Where the model knows the folios it
// is about to visit — writeback's batch, a workload's next records — it
// reads them first in one pass of independent loads, so that the host
// waits for their misses together, not one after another. These reads
// model nothing in the kernel, count no event and change no state.

// prefetchBatch is how many folios one pass of Prefetch reads before it
// reads the next ones' slots: about what a core keeps in flight.
const prefetchBatch = 16

// touchFolios reads a word of each folio of fs and of the buffer head of
// its frame (Folio.spare, its ring's head when it has buffers), the two
// lines a write or a writeback of the folio reads first, before a loop that
// works on them one at a time, and returns their sum: a value with no
// meaning, which its caller keeps so that the compiler keeps the loads.
// O(len(fs)).
func touchFolios(fs []*Folio) int32 {
	var t int32
	for _, f := range fs {
		t += f.ref.Load() + f.spare.count.Load()
	}
	return t
}

// Prefetch reads what a page-cache lookup of each byte offset of offs will
// read — the index's slot and the first line of the folio it holds — so that
// the host's cache misses of a run of upcoming random accesses overlap (see
// above). It is a hint for a simulator that knows its next records: it
// models nothing, counts no event, changes no state and is safe beside
// every other call; offsets past the device's end are ignored. It returns a
// value with no meaning, which the caller keeps (adds to a field of its
// own) so that the compiler keeps the loads. Lock-free, O(len(offs) · index
// height); allocates nothing.
func (d *BlockDevice) Prefetch(offs []uint64) int32 {
	var folios [prefetchBatch]*Folio
	var t int32
	shift := d.m.pageShift
	for len(offs) > 0 {
		n := 0
		for _, off := range offs[:min(len(offs), prefetchBatch)] {
			if off < d.size {
				if f, _ := d.mapping.index.Load(off >> shift); f != nil {
					folios[n] = f
					n++
				}
			}
		}
		t += touchFolios(folios[:n])
		offs = offs[min(len(offs), prefetchBatch):]
	}
	return t
}
