package bufcache

import (
	"math"
	"math/bits"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// raState models struct file_ra_state (include/linux/fs.h, v6.18): the
// readahead window of one open file. start, size and asyncSize are the last
// window (its PG_readahead folio is asyncSize pages before its end); order
// is the folio order the next window asks for (ra->order); prevPos is the
// byte position after the previous read (ra->prev_pos, −1 before the
// first).
type raState struct {
	start, size, asyncSize uint64
	order                  uint8
	prevPos                int64
}

// init models file_ra_state_init: no window, no previous read.
func (r *raState) init() { *r = raState{prevPos: -1} }

// defaultReadAheadKB is VM_READAHEAD_PAGES in KiB, read_ahead_kb's default.
const defaultReadAheadKB = 128

// raLimits returns the bdi's ra_pages and io_pages in pages of pageSize.
// io_pages is max_sectors: the queue's if disk reports its limits, else the
// default 1280 KiB. ra_pages is readAheadKB if it is set (read_ahead_kb
// written through sysfs or blockdev --setra), else the window the queue's
// limits give: twice the device's optimal I/O size, io_opt, and at least
// VM_READAHEAD_PAGES (128 KiB) — blk_queue_io_opt in v5.9–v6.9,
// blk_apply_bdi_limits from v6.10. An md array's io_opt is a stripe
// (md.Array.OptimalIOSize): two stripes. A disk reports none: 128 KiB,
// except that from v6.17 a rotational disk without an io_opt reads ahead
// twice its max_sectors (a v6.18 queue, blk.Version618: this machine's
// rotational virtio disk, max_sectors_kb 4096, has read_ahead_kb 8192).
func raLimits(disk blk.Device, readAheadKB, pageSize uint32) (raPages, ioPages uint64) {
	maxSectors := uint64(blk.DefMaxSectors)
	q, isQueue := disk.(interface{ Limits() blk.Limits })
	if isQueue {
		maxSectors = uint64(q.Limits().MaxSectors)
	}
	ioBytes := maxSectors << blk.SectorShift
	if readAheadKB != 0 {
		raPages = uint64(readAheadKB) << 10 / uint64(pageSize)
	} else {
		raPages = defaultReadAheadKB << 10 / uint64(pageSize)
		r, rotational := disk.(interface{ Rotational() bool })
		if o, ok := disk.(interface{ OptimalIOSize() uint32 }); ok {
			raPages = max(raPages, 2*uint64(o.OptimalIOSize())/uint64(pageSize))
		} else if isQueue && rotational && r.Rotational() && q.Limits().Version == blk.Version618 {
			raPages = max(raPages, 2*ioBytes/uint64(pageSize))
		}
	}
	return max(1, raPages), max(1, ioBytes/uint64(pageSize))
}

// readOnDemand models filemap_read with on-demand readahead (mm/readahead.c
// as v6.18 has it; every kernel the model has reads ahead on demand, and
// with one-page folios the windows of a sequential reader are v5.10's
// ondemand_readahead's: get_init_ra_size, then get_next_ra_size from each
// mark; v6.18 also trims an asynchronous window to end on a 4-page
// boundary, which v5.10 does not and the model does for every kernel — no
// window of dd's 1 MiB reads moves) for the file whose readahead state is
// ra: per folio, filemap_get_pages —
// a miss starts synchronous readahead (page_cache_sync_ra) and, if the
// folio is still absent, reads one folio of the minimum order
// (filemap_create_folio); a folio carrying PG_readahead starts the next
// window (page_cache_async_ra); a folio that is not uptodate is read under
// its lock (filemap_update_page) — then the copy. At the end ra->prev_pos
// is the position after the last byte read. Reads at or past the end return
// 0, reads crossing it are shortened; ErrIO if a read failed, after what was
// read before it.
func (d *BlockDevice) readOnDemand(cpu *CPU, ra *raState, pos uint64, dst []byte) (uint64, error) {
	if pos >= d.size {
		return 0, nil
	}
	n := min(uint64(len(dst)), d.size-pos)
	ps := uint64(d.m.cfg.PageSize)
	var done uint64
	defer func() { ra.prevPos = int64(pos + done) }()
	for done < n {
		p := pos + done
		minNr := uint64(1) << d.mapping.minFolioOrder()
		index := p / ps &^ (minNr - 1)
		last := blocksizeRoundUp(blocksizeDivRoundUp(pos+n, ps), minNr)
		f, err := d.getReadFolio(cpu, ra, p/ps, index, last)
		if err != nil {
			return done, err
		}
		done += d.copyOut(cpu, f, p, dst[done:n])
		f.put(cpu)
	}
	return done, nil
}

// blocksizeDivRoundUp and blocksizeRoundUp are DIV_ROUND_UP and round_up for
// the read's page arithmetic (a power-of-two multiple for round_up).
func blocksizeDivRoundUp(x, d uint64) uint64 { return (x + d - 1) / d }
func blocksizeRoundUp(x, m uint64) uint64    { return (x + m - 1) &^ (m - 1) }

// getReadFolio returns the uptodate folio spanning page at, with a reference:
// filemap_get_pages for a read whose remaining pages are [index, last)
// (index is at aligned down to the minimum folio order, last rounded up to
// it).
func (d *BlockDevice) getReadFolio(cpu *CPU, ra *raState, at, index, last uint64) (*Folio, error) {
	m := &d.mapping
	for {
		f := m.getFolio(cpu, at, fgpAccessed)
		if f == nil {
			d.syncReadahead(cpu, ra, index, last-index)
			if f = m.getFolio(cpu, at, fgpAccessed); f == nil {
				m.invalidateLock.RLock() // filemap_create_folio
				f = m.getFolio(cpu, at, fgpLock|fgpCreat|fgpAccessed)
				m.invalidateLock.RUnlock()
				return d.readLocked(cpu, f)
			}
		}
		if f.Has(FolioReadahead) {
			d.asyncReadahead(cpu, ra, f, last-f.index)
		}
		if f.Has(FolioUptodate) {
			return f, nil
		}
		f.lockFolio(cpu) // waits for a read in flight
		if f.mapping.Load() != m {
			f.unlockFolio() // truncated or reclaimed while we waited
			f.put(cpu)
			continue
		}
		return d.readLocked(cpu, f)
	}
}

// raMaxPages models ractl_max_pages: the window's maximum, ra_pages, or up
// to io_pages for a request larger than ra_pages.
func (d *BlockDevice) raMaxPages(req uint64) uint64 {
	maxPages := d.raPages
	if req > maxPages && d.ioPages > maxPages {
		maxPages = min(req, d.ioPages)
	}
	return maxPages
}

// initRASize models get_init_ra_size: the first window for a read of size
// pages, rounded up to a power of two and quadrupled when small, doubled when
// medium, else the maximum.
func initRASize(size, maxPages uint64) uint64 {
	n := uint64(1) << bits.Len64(max(size, 1)-1)
	switch {
	case n <= maxPages/32:
		return n * 4
	case n <= maxPages/4:
		return n * 2
	}
	return maxPages
}

// nextRASize models get_next_ra_size: the next window, four times the last
// while small, twice while at most half the maximum, else the maximum.
func nextRASize(cur, maxPages uint64) uint64 {
	switch {
	case cur < maxPages/16:
		return 4 * cur
	case cur <= maxPages/2:
		return 2 * cur
	}
	return maxPages
}

// syncReadahead models page_cache_sync_ra (mm/readahead.c, v6.18) for a read
// missing at page index and wanting req pages: the start of the device, a
// read larger than the window, or one following the previous read
// (index − prev_index ≤ 1) opens a window of get_init_ra_size pages whose
// last req are not readahead pages; otherwise the pages cached just before
// index tell a stream (a window of that many more, its last page the mark)
// from a small random read, which reads only its own pages.
func (d *BlockDevice) syncReadahead(cpu *CPU, ra *raState, index, req uint64) {
	if t := d.tracing(); t != nil {
		d.emit(t, cpu, TraceEvent{Kind: TraceRASync, Index: index, Pages: req})
	}
	maxPages := d.raMaxPages(req)
	prevIndex := uint64(ra.prevPos) >> d.m.pageShift // −1 gives a huge index, as the kernel's cast
	if index == 0 || req > maxPages || index-prevIndex <= 1 {
		ra.start, ra.size = index, initRASize(req, maxPages)
		ra.asyncSize = ra.size >> 1
		if ra.size > req {
			ra.asyncSize = ra.size - req
		}
	} else {
		miss := d.prevMiss(index-1, maxPages)
		contig := index - miss - 1
		if contig <= req { // a small random read
			d.doPageCacheRA(cpu, index, req, 0)
			return
		}
		if miss == math.MaxUint64 { // cached from the start: a long stream
			contig *= 2
		}
		ra.start, ra.size, ra.asyncSize = index, min(contig+req, maxPages), 1
	}
	ra.order = 0
	d.raOrder(cpu, ra, ra.start)
}

// asyncReadahead models page_cache_async_ra (v6.18) for a read reaching f,
// which carries PG_readahead, wanting req pages from f: the flag is cleared;
// if f is where the last window expected it, the next window follows that
// one (get_next_ra_size, never shrinking); otherwise the window is rebuilt
// from the cached pages after f (page_cache_next_miss). Either way the order
// asked for grows by 2 and the window is trimmed to end on that order's
// alignment (capped by the maximum window's).
func (d *BlockDevice) asyncReadahead(cpu *CPU, ra *raState, f *Folio, req uint64) {
	if f.Has(FolioWriteback) {
		return
	}
	index := f.index
	if t := d.tracing(); t != nil {
		d.emit(t, cpu, TraceEvent{Kind: TraceRAAsync, Index: index, Pages: req})
	}
	f.flags.Clear(FolioReadahead)
	maxPages := d.raMaxPages(req)
	expected := (ra.start + ra.size - ra.asyncSize) &^ (f.NrPages() - 1)
	if index == expected {
		ra.start += ra.size
		ra.size = max(ra.size, nextRASize(ra.size, maxPages))
	} else {
		start := d.nextMiss(index+1, maxPages)
		if start == 0 || start-index > maxPages {
			return
		}
		ra.start, ra.size = start, nextRASize(start-index+req, maxPages)
	}
	ra.order += 2
	align := uint64(1) << min(uint(ra.order), uint(bits.TrailingZeros64(maxPages)))
	end := ra.start + ra.size
	if aligned := end &^ (align - 1); aligned > ra.start {
		ra.size -= end - aligned
	}
	ra.asyncSize = ra.size
	d.raOrder(cpu, ra, ra.start)
}

// prevMiss models page_cache_prev_miss(mapping, index, maxScan) as v6.18
// has it: xas_prev steps back before it looks, so the pages examined are
// index−1, index−2, ..., at most maxScan of them; it returns the first one
// not cached, the last one examined if all are, or MaxUint64 when the scan
// wraps below 0.
func (d *BlockDevice) prevMiss(index, maxScan uint64) uint64 {
	for ; maxScan > 0; maxScan-- {
		index--
		if f, _ := d.mapping.index.Load(index); f == nil {
			return index
		}
		if index == math.MaxUint64 {
			return index
		}
	}
	return index
}

// nextMiss models page_cache_next_miss: the first page from index, among at
// most maxScan, that is not cached; index+maxScan if all are; 0 if the scan
// wraps past the last index.
func (d *BlockDevice) nextMiss(index, maxScan uint64) uint64 {
	for ; maxScan > 0; maxScan-- {
		if f, _ := d.mapping.index.Load(index); f == nil {
			return index
		}
		if index == math.MaxUint64 {
			return 0
		}
		index++
	}
	return index
}

// raOrder models page_cache_ra_order (v6.18) for the window ra describes,
// from page start: the order asked for is clamped to the mapping's maximum,
// to the window (ilog2 of its size) and to the mapping's minimum; folios of
// that order fill the window up to its end or the device's, smaller where
// an index is not aligned to it or the end is near, the one holding the mark
// (asyncSize pages before the window's end) getting PG_readahead; they are
// read together (read_pages). If a page of the window is already cached the
// rest is left to do_page_cache_ra, order-0 (the minimum) folios skipping the
// cached ones; without large folio support the whole window is.
func (d *BlockDevice) raOrder(cpu *CPU, ra *raState, start uint64) {
	if t := d.tracing(); t != nil {
		d.emit(t, cpu, TraceEvent{Kind: TraceRAOrder, Index: start, Order: ra.order, Pages: ra.size})
	}
	m := &d.mapping
	index := start
	failed := true
	if m.large {
		m.invalidateLock.RLock()
		minOrder := m.minFolioOrder()
		limit := min((d.size-1)>>d.m.pageShift, start+ra.size-1)
		mark := start + ra.size - ra.asyncSize
		order := min(ra.order, m.maxOrder, uint8(bits.Len64(ra.size)-1))
		order = max(order, minOrder)
		ra.order = order
		index &^= 1<<minOrder - 1
		b := cpu.readBatch()
		failed = false
		for index <= limit {
			o := order
			if index&(1<<o-1) != 0 {
				o = uint8(bits.TrailingZeros64(index))
			}
			for o > minOrder && index+(1<<o)-1 > limit {
				o--
			}
			f := m.addFolio(cpu, index, o, fgpLock)
			if f == nil {
				failed = true
				break
			}
			if index == mark&^(1<<o-1) {
				f.flags.Set(FolioReadahead)
			}
			b.add(d, f)
			index += 1 << o
		}
		b.submit(d)
		m.invalidateLock.RUnlock()
	} else {
		ra.order = 0
	}
	if failed && ra.size > index-start {
		d.doPageCacheRA(cpu, index, ra.size-(index-start), ra.asyncSize)
	}
}

// doPageCacheRA models do_page_cache_ra: nr pages from index, cut at the
// device's end, read by page_cache_ra_unbounded.
func (d *BlockDevice) doPageCacheRA(cpu *CPU, index, nr, lookahead uint64) {
	endIndex := (d.size - 1) >> d.m.pageShift
	if index > endIndex {
		return
	}
	d.raUnbounded(cpu, index, min(nr, endIndex-index+1), lookahead)
}

// raUnbounded models page_cache_ra_unbounded (v6.18): folios of the mapping's
// minimum order for nr pages from index (aligned down to that order), the
// one lookahead pages before the end marked PG_readahead, skipping (and
// ending the batch at) each index already cached.
func (d *BlockDevice) raUnbounded(cpu *CPU, index, nr, lookahead uint64) {
	if t := d.tracing(); t != nil {
		d.emit(t, cpu, TraceEvent{Kind: TraceRAUnbounded, Index: index, Pages: nr})
	}
	m := &d.mapping
	m.invalidateLock.RLock()
	defer m.invalidateLock.RUnlock()
	minOrder := m.minFolioOrder()
	minNr := uint64(1) << minOrder
	aligned := index &^ (minNr - 1)
	mark := uint64(math.MaxUint64)
	if lookahead <= nr {
		mark = (index+nr-lookahead+minNr-1)&^(minNr-1) - aligned
	}
	nr += index - aligned
	b := cpu.readBatch()
	for i := uint64(0); i < nr; i += minNr {
		if f, _ := m.index.Load(aligned + i); f != nil {
			b.submit(d)
			continue
		}
		f := m.addFolio(cpu, aligned+i, minOrder, fgpLock)
		if f == nil {
			b.submit(d)
			continue
		}
		if i == mark {
			f.flags.Set(FolioReadahead)
		}
		b.add(d, f)
	}
	b.submit(d)
}

// readBatch is read_pages' batch: the locked new folios of a readahead, in
// index order, each dropped by the caller once in a bio, and the plug they
// are read in.
type readBatch struct {
	cpu     *CPU
	run     []*Folio
	plugged bool
}

// readBatch returns the CPU's batch, empty.
func (c *CPU) readBatch() *readBatch {
	c.raBatch.cpu, c.raBatch.run = c, c.raScratch[:0]
	return &c.raBatch
}

// add appends f to the batch (mpage_readahead's bios hold BIO_MAX_VECS
// folios: a full one is sent first).
func (b *readBatch) add(d *BlockDevice, f *Folio) {
	if len(b.run) == bioMaxPages {
		b.send(d)
	}
	b.run = append(b.run, f)
}

// send sends the folios gathered so far as one bio, inside the batch's plug.
func (b *readBatch) send(d *BlockDevice) {
	if len(b.run) == 0 {
		return
	}
	if !b.plugged {
		b.cpu.plug.Start()
		b.plugged = true
	}
	b.run = d.submitReadahead(b.cpu, b.run, true, blk.FlagRahead)
}

// submit models read_pages: what is gathered is read (blk_start_plug,
// ->readahead, blk_finish_plug), and the batch is empty again.
func (b *readBatch) submit(d *BlockDevice) {
	b.send(d)
	if b.plugged {
		_ = b.cpu.plug.Finish()
		b.plugged = false
	}
	b.cpu.raScratch = b.run[:0]
}
