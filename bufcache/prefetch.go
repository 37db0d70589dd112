package bufcache

// The model's own memory: a page-cache lookup reads an index slot, then
// the folio it points to and the buffer head beside it (Folio.spare), loads
// that miss the host's caches when the accesses are random over a device
// larger than they hold (a 1 GiB device's 262,144 folios fill 32 MiB of
// frames). Where the model knows the folios it is about to visit —
// writeback's batch, a workload's next records — it reads them first in a
// pass of independent loads, so that the host waits for their misses
// together, not one after another. These reads model nothing in the
// kernel, count no event and change no state. They are atomic loads, which
// the compiler keeps although their values are not used.

// hostPrefetchChunk is how many offsets HostPrefetch looks up before it
// reads their folios: about the misses a core keeps in flight.
const hostPrefetchChunk = 16

// touchFolios reads a word of each folio of fs, and with spare of the
// buffer head of its frame (Folio.spare, its ring's head when it has
// buffers): the two lines a write or a writeback of the folio reads first,
// read before a loop that works on the folios one at a time. Only a
// machine driven by one goroutine (Config.OneGoroutine) may read the
// spare: elsewhere a buffer head being freed on another goroutine is
// zeroed with plain stores (BufferHead.reset) while the reader holds no
// reference to its folio. O(len(fs)).
func touchFolios(fs []*Folio, spare bool) {
	for _, f := range fs {
		f.ref.Load()
		if spare {
			f.spare.count.Load()
		}
	}
}

// HostPrefetch reads what a page-cache lookup of each byte offset of offs
// will read — the index's slot, and the folio and buffer head of the frame
// it holds — so that the host's cache misses of a run of upcoming random
// accesses overlap (see above). It is a hint to the host's caches for a
// simulator that knows its next records, not a model of prefetching or
// readahead: it counts no event and changes no state. Offsets past the
// device's end are ignored. It may run wherever a lookup may: on a machine
// with Config.OneGoroutine only on the goroutine that drives it;
// otherwise beside every other call (lock-free with the xarray index; the
// B-tree index takes its read lock), reading the folio's line only.
// O(len(offs) · index height); allocates nothing.
func (d *BlockDevice) HostPrefetch(offs []uint64) {
	var folios [hostPrefetchChunk]*Folio
	shift, spare := d.m.pageShift, d.m.cfg.OneGoroutine
	for len(offs) > 0 {
		n := 0
		for _, off := range offs[:min(len(offs), hostPrefetchChunk)] {
			if off < d.size {
				if f := d.mapping.index.Warm(off >> shift); f != nil {
					folios[n] = f
					n++
				}
			}
		}
		touchFolios(folios[:n], spare)
		offs = offs[min(len(offs), hostPrefetchChunk):]
	}
}
