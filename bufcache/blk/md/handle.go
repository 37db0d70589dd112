package md

import (
	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// step is where a stripe_head's handling is.
type step uint8

const (
	// stepNew: not yet handled.
	stepNew step = iota
	// stepRead: its pre-reads are in flight, or done and its writes are next.
	stepRead
	// stepWrite: its writes are in flight.
	stepWrite
	// stepDone: written, or abandoned after it lost too many members.
	stepDone
	// stepReplan: a pre-read failed; plan again without that member.
	stepReplan
)

// batch models one pass of raid5d (v5.10) over the stripes released to it,
// under raid5d's own plug: handle_stripe for each, in rounds of member bios.
// The first round sends every stripe's pre-reads or, for a stripe that needs
// none, computes its parity and sends its writes; the second writes the
// stripes that pre-read. When the last round has completed, the stripes are
// freed and the bios attached to them complete. A batch belongs to the
// goroutine running its current round; batches are recycled.
type batch struct {
	a       *Array
	stripes []*stripeHead
	plug    blk.Plug   // raid5d's plug: member bios of consecutive stripes merge
	pending conc.Int32 // member bios in flight, plus one while a round is issued
	mu      conc.Mutex // guards the stripes' err and step changes by advance, and failed
	bios    memberBios
	units   [][]byte    // one stripe's data units, for genSyndrome
	ends    []stripeEnd // the attachments to complete when the batch is done
	t       Stats       // counters, added to the array's when the batch is done

	// Degraded operation: member I/O that failed in the current round, and
	// the plans of the stripes planned with members lost (by stripe index).
	failed []stripeFault
	plans  []degPlan
}

// stripeEnd is one attachment to complete, with its stripe's error.
type stripeEnd struct {
	r   *request
	err error
}

// newBatch returns an empty batch from the free list, or a new one. The
// cache's mu is held.
func (a *Array) newBatch() *batch {
	if b := a.cache.batches.Get(); b != nil {
		return b
	}
	b := &batch{a: a}
	if a.confined {
		b.pending.Confine()
		b.mu.Confine()
	}
	return b
}

// adopt moves sh, taken off its list by the caller, into b: the stripe is
// released to raid5d's handle_list. The cache's mu is held.
func (b *batch) adopt(sh *stripeHead) {
	sh.list, sh.b = nil, b
	b.stripes = append(b.stripes, sh)
}

// run issues rounds until one is left in flight, whose last completion carries
// the batch on (endStripeMember), or until the batch is done. Members that
// complete inside Submit, as MemDisk and Queue do, leave the whole batch to
// this loop on the calling goroutine.
func (b *batch) run() {
	for {
		b.pending.Store(1)
		b.plug.Start()
		for i, sh := range b.stripes {
			b.handleStripe(i, sh)
		}
		_ = b.plug.Finish() // started just above: no error
		if b.pending.Add(-1) != 0 || !b.advance() {
			return
		}
	}
}

// endStripeMember is the EndIO of a stripe's member bio: it notes a failure
// for advance and, for the last bio of a round, carries the batch on.
func endStripeMember(mb *blk.Bio) {
	sh := memberOf(mb).owner.(*stripeHead)
	b := sh.b
	if mb.Err != nil {
		b.noteFault(stripeFault{sh: sh, mb: mb, op: mb.Op})
	}
	if b.pending.Add(-1) == 0 && b.advance() {
		b.run()
	}
}

// advance is called when a round has completed. It handles the round's
// member failures (absorbFaults), then returns true when stripes whose
// pre-reads succeeded are to be written, or stripes whose pre-reads failed
// are to be planned again, next; otherwise it finishes the batch and returns
// false. A stripe that lost too many members is not written.
func (b *batch) advance() bool {
	b.absorbFaults()
	again := false
	b.mu.Lock()
	for _, sh := range b.stripes {
		if (sh.step == stepRead || sh.step == stepReplan) && sh.err == nil {
			again = true
		} else {
			sh.step = stepDone
		}
	}
	b.mu.Unlock()
	if !again {
		b.finish()
	}
	return again
}

// handleStripe models handle_stripe (v5.10) for stripe i of the batch in
// the current round: a new stripe chooses how to compute its parity and sends
// its pre-reads, or its writes if it needs none (planDegraded while members
// are faulty); a stripe that has pre-read is written; one whose pre-read
// failed is planned again; a written one is left alone.
func (b *batch) handleStripe(i int, sh *stripeHead) {
	switch sh.step {
	case stepNew:
		if sh.data && sh.pages == nil {
			sh.pages = make([]byte, len(b.a.members)*pageSize)
		}
		if b.a.Degraded() != 0 {
			b.planDegraded(i, sh, true)
			return
		}
		if b.plan(sh) == 0 {
			b.write(i, sh)
			return
		}
		sh.step = stepRead
		a := b.a
		for k, m := range sh.cover {
			if sh.rmw && m != 0 || !sh.rmw && m != fullUnit {
				b.unitIO(sh, blk.OpRead, a.dataDev(sh.row, k))
			}
		}
		if sh.rmw {
			pd, qd := a.parityDevs(sh.row)
			b.unitIO(sh, blk.OpRead, pd)
			b.unitIO(sh, blk.OpRead, qd)
		}
	case stepRead:
		b.write(i, sh)
	case stepReplan:
		b.planDegraded(i, sh, false)
	}
}

// plan models handle_stripe_dirtying's choice (v5.10, rmw_level 1): count the
// pre-reads of reconstruct-write (every data unit not wholly overwritten) and
// of read-modify-write (every unit written, and P and Q), choose rmw only if it
// reads strictly fewer, count the stripe, and return the pre-reads chosen.
func (b *batch) plan(sh *stripeHead) uint64 {
	var touched, whole uint64
	for _, m := range sh.cover {
		if m != 0 {
			touched++
		}
		if m == fullUnit {
			whole++
		}
	}
	rcwReads, rmwReads := uint64(len(sh.cover))-whole, touched+2
	sh.rmw = rmwReads < rcwReads
	b.t.Stripes++
	b.t.ParityBytes += 2 * pageSize
	switch {
	case rcwReads == 0:
		b.t.FullStripeWrites++
	case sh.rmw:
		b.t.RMWWrites++
		return rmwReads
	default:
		b.t.RMWWrites++
		b.t.ReconstructWrites++
	}
	return rcwReads
}

// write computes the parity of sh, stripe i of the batch, and sends the
// writes of its written data units and of P and Q (ops_run_io: one bio per
// member per stripe_head; none to a faulty member).
func (b *batch) write(i int, sh *stripeHead) {
	sh.step = stepWrite
	b.computeParity(i, sh)
	a := b.a
	for k, m := range sh.cover {
		if m != 0 {
			b.unitIO(sh, blk.OpWrite, a.dataDev(sh.row, k))
		}
	}
	pd, qd := a.parityDevs(sh.row)
	b.unitIO(sh, blk.OpWrite, pd)
	b.unitIO(sh, blk.OpWrite, qd)
}

// computeParity copies the attached writes into the pages of sh, stripe i of
// the batch, in the order they came (ops_run_biodrain) and computes P and Q:
// by folding each written unit's old and new contents into the old P and Q
// (read-modify-write: ops_run_prexor6, then ops_run_reconstruct6 with
// xor_syndrome), or from all the data units (full-stripe write and
// reconstruct-write: gen_syndrome). A stripe planned with lost data units
// first rebuilds their old contents (rebuildLost). A metadata-only stripe
// computes nothing. O(members · PAGE_SIZE).
func (b *batch) computeParity(i int, sh *stripeHead) {
	if !sh.data {
		return
	}
	b.rebuildLost(i, sh)
	a := b.a
	pd, qd := a.parityDevs(sh.row)
	p, q := sh.page(pd), sh.page(qd)
	if sh.rmw {
		b.foldWritten(sh, p, q)
	}
	for _, w := range sh.writes {
		d := sh.page(a.dataDev(sh.row, int(w.k)))
		copyPayload(d[w.lo:w.hi], w.r.parent.Vecs(), w.off)
	}
	if sh.rmw {
		b.foldWritten(sh, p, q)
		return
	}
	b.units = b.units[:0]
	for k := range sh.cover {
		b.units = append(b.units, sh.page(a.dataDev(sh.row, k)))
	}
	genSyndrome(p, q, b.units)
}

// foldWritten folds every written data unit's page into P and Q
// (xor_syndrome): once before the new data is copied in, to take the old data
// out, once after, to put the new data in.
func (b *batch) foldWritten(sh *stripeHead, p, q []byte) {
	for k, m := range sh.cover {
		if m != 0 {
			xorSyndrome(p, q, sh.page(b.a.dataDev(sh.row, k)), k)
		}
	}
}

// unitIO sends sh's page of member dev to or from that member, through
// raid5d's plug. Nothing goes to a faulty member: a write skips it, a read is
// noted as failed so that the stripe is planned again.
func (b *batch) unitIO(sh *stripeHead, op blk.Op, dev int) {
	a := b.a
	if a.faulty(dev) {
		if op == blk.OpRead {
			b.noteFault(stripeFault{sh: sh, dev: dev, op: op})
		}
		return
	}
	mb := b.bios.next(op, dev, a.rowSector(sh.row)+sh.unit<<(pageShift-blk.SectorShift), endStripeMember, sh)
	mb.AddVec(sh.page(dev), pageSize) // one page in a new bio: cannot pass 4 GiB
	b.t.MemberBios++
	if op == blk.OpRead {
		b.t.MemberReads++
	}
	b.pending.Add(1)
	blk.SubmitBio(&b.plug, a.members[dev], mb)
}

// finish ends the batch (handle_stripe_clean_event and return_io): it adds the
// counters to the array's, frees the stripes, wakes the submitters waiting for
// one, completes the attachments — a bio completes with its last — and returns
// the batch to the free list.
func (b *batch) finish() {
	a, c := b.a, &b.a.cache
	a.mu.Lock()
	a.stats.add(&b.t)
	a.mu.Unlock()
	b.t = Stats{}
	c.mu.Lock()
	for _, sh := range b.stripes {
		for _, w := range sh.writes {
			b.ends = append(b.ends, stripeEnd{r: w.r, err: sh.err})
		}
		c.release(sh)
	}
	c.wait.Broadcast()
	c.mu.Unlock()
	for _, e := range b.ends {
		e.r.done(e.err)
	}
	clear(b.ends)
	clear(b.stripes)
	clear(b.plans)
	b.ends, b.stripes, b.plans = b.ends[:0], b.stripes[:0], b.plans[:0]
	b.bios.reset()
	c.mu.Lock()
	c.batches.Put(b)
	c.mu.Unlock()
}
