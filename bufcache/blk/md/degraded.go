package md

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// Errors of degraded operation.
var (
	// ErrNoMember: SetFaulty with a member index out of range.
	ErrNoMember = errors.New("md: no such member")
	// ErrNoRedundancy: SetFaulty on a raid0 member. raid0 has no error
	// handler in v5.10 (md_error does nothing for it): a member error fails
	// the I/O and the member stays in the array.
	ErrNoRedundancy = errors.New("md: level has no redundancy")
	// ErrLastCopy: SetFaulty on a raid10 member that holds the last working
	// copy of some data. raid10_error refuses to fail it, and md's state_store
	// ("echo faulty > .../state") returns -EBUSY.
	ErrLastCopy = errors.New("md: member holds the last working copy")
	// ErrDataLost: the data asked for has no working copy left (raid10) or
	// more than two members of its raid6 stripe have failed. The array's bio
	// completes with an error wrapping it and blk.ErrIO.
	ErrDataLost = errors.New("md: too many failed members")
)

// errSkipped marks a member bio that was not sent because its member is
// faulty: a read to serve some other way.
var errSkipped = errors.New("md: member is faulty")

// maxRaid6Lost is raid6's max_degraded: any two members may fail.
const maxRaid6Lost = 2

// degradedState is which members are faulty (the rdevs' Faulty bit and
// mddev->degraded).
type degradedState struct {
	mu     sync.Mutex // serialises md_error's decisions
	faulty []atomic.Bool
	n      atomic.Int32
}

// init sizes the state for n members, none faulty.
func (s *degradedState) init(n int) { s.faulty = make([]atomic.Bool, n) }

// faulty reports whether member dev is faulty: two atomic loads at most, so
// the healthy path pays almost nothing.
func (a *Array) faulty(dev int) bool { return a.deg.n.Load() != 0 && a.deg.faulty[dev].Load() }

// Degraded returns the number of faulty members (mddev->degraded, the
// "degraded" attribute in sysfs). raid6 serves every request while it is at
// most 2; a raid10 never gets a member that holds the last copy of some data
// marked faulty. O(1).
func (a *Array) Degraded() int { return int(a.deg.n.Load()) }

// Failed returns the indices of the faulty members, in increasing order
// (mdadm --detail's "faulty" devices). O(members).
func (a *Array) Failed() []int {
	var out []int
	for i := range a.deg.faulty {
		if a.deg.faulty[i].Load() {
			out = append(out, i)
		}
	}
	return out
}

// SetFaulty marks member dev faulty, as "mdadm --fail" (md's state_store
// "faulty", which calls md_error) does: the array goes on degraded, and no
// member bio is sent to dev again. Marking a faulty member again does
// nothing. A raid6 accepts any member (past two failures its I/O fails with
// ErrDataLost). Errors: ErrNoMember; ErrNoRedundancy for raid0; ErrLastCopy
// for a raid10 member whose mirror is already faulty. O(members).
func (a *Array) SetFaulty(dev int) error {
	switch {
	case dev < 0 || dev >= len(a.members):
		return fmt.Errorf("%w: %s has %d members, not %d", ErrNoMember, a.name, len(a.members), dev)
	case a.level == Raid0:
		return fmt.Errorf("%w: %s is %s", ErrNoRedundancy, a.name, a.level)
	case !a.mdError(dev):
		return fmt.Errorf("%w: %s member %d (%s)", ErrLastCopy, a.name, dev, a.members[dev].Name())
	}
	return nil
}

// mdError models md_error → the personality's error handler (v5.10) of a
// raid10 or raid6 array (raid0 has none: callers do not call it there):
// raid10_error marks the member Faulty unless it holds the last working copy
// of some data (enough() fails without it); raid5_error (raid6) always marks
// it. It reports whether dev is now faulty. O(members) under the state's
// lock.
func (a *Array) mdError(dev int) bool {
	s := &a.deg
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faulty[dev].Load() {
		return true
	}
	if a.level != Raid6 && !a.enoughWithout(dev) {
		return false
	}
	s.faulty[dev].Store(true)
	s.n.Add(1)
	return true
}

// enoughWithout models raid10's enough(): whether every chunk keeps a copy on
// a working member once dev fails too. Copies pair up members in a pattern
// that repeats every n chunks, so n chunks are checked. s.mu is held.
func (a *Array) enoughWithout(dev int) bool {
	for c := range uint64(len(a.members)) {
		copies, nc := a.chunkCopies(c)
		ok := false
		for _, l := range copies[:nc] {
			ok = ok || l.dev != dev && !a.deg.faulty[l.dev].Load()
		}
		if !ok {
			return false
		}
	}
	return true
}

// dataLost returns the error of an I/O whose data has no working copy.
func (a *Array) dataLost(op blk.Op, sector uint64) error {
	return fmt.Errorf("%w: %w: %s member sector %d on %s, faulty members %v",
		blk.ErrIO, ErrDataLost, op, sector, a.name, a.Failed())
}

// otherCopy returns where raid10 keeps the other copy of what member dev
// holds at member sector sector (the inverse of chunkCopies): near-2 pairs
// slot s of the striping with slot s^1, either way; far-2 puts the copy of a
// first-half sector in the second half of the next member. A far-2 read that
// fails is always of the first copy: readCopy sends reads to the second only
// when the first's member is faulty, and then the second is the last copy.
func (a *Array) otherCopy(dev int, sector uint64) location {
	n := uint64(len(a.members))
	if a.level == Raid10Far2 {
		return location{dev: (dev + 1) % int(n), sector: sector + a.rowSector(a.rowChunks)}
	}
	row := sector >> (a.chunkShift - blk.SectorShift)
	within := sector - a.rowSector(row)
	o := a.slot((row*n + uint64(dev)) ^ 1)
	return location{dev: o.dev, sector: o.sector + within}
}

// addFailed notes a member bio that failed or was skipped, for the recovery
// pass (recover) that runs when every member bio of the pass has completed.
func (r *request) addFailed(mb *blk.Bio) {
	r.mu.Lock()
	r.failed = append(r.failed, mb)
	r.mu.Unlock()
}

// setErr records err as the parent's error unless it already has one.
func (r *request) setErr(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// reconJob rebuilds the part of a raid6 member read that a faulty member
// should have served: the stripe units it covers are read from every working
// member, and the missing data unit is computed from the others and P or Q
// (handle_stripe's fetch_block with compute_block_1/2 for a degraded read).
type reconJob struct {
	target *blk.Bio // the member read to serve; its vectors alias the parent's memory
	dev    int      // the member it was meant for
	first  uint64   // member sector of the first stripe unit covered
	span   uint32   // bytes covered per member: whole units
	pages  []byte   // with data: span bytes per member, in member order
	lost   []int    // the members not read (faulty when the reads were sent)
	lo, hi int      // the job's reads: r.bios.bio(lo) to r.bios.bio(hi-1)
	retry  bool     // one of its reads failed: read again without that member
}

// recover models the md thread's error handling (raid10d's
// handle_read_error and handle_write_completed, raid5d's retry of failed
// aligned reads) for a request whose member bios have all completed: each
// failed member goes through md_error; a write error is absorbed when the
// member could be failed (the other copy holds the data), a read is sent to
// the other copy (raid10) or rebuilt from the other members (raid6), and
// raid0 passes the error on. Rebuilt reads finish in the next pass. It
// reports whether it issued a pass, whose last completion calls done again.
//
// Simplification: the kernel first tries to correct a read error by
// rewriting the sector from a good copy (fix_read_error, R5_ReWrite) and
// records write errors in the member's bad-block log, failing the member only
// when those do not work; the model fails the member at once, as an array
// without a bad-block log whose member keeps failing does.
func (r *request) recover() bool {
	r.mu.Lock()
	failed := r.failed
	r.failed = nil
	r.mu.Unlock()
	if len(failed) == 0 && len(r.jobs) == 0 {
		return false
	}
	r.pending.Store(1)
	jobs := r.jobs
	r.jobs = nil
	for _, mb := range failed {
		r.absorb(mb, jobs)
	}
	for _, j := range jobs {
		if j.retry {
			j.retry = false
			r.startRecon(j)
		} else {
			r.finishRecon(j)
		}
	}
	r.done(nil)
	return true
}

// absorb handles one member bio that failed or was skipped; jobs are the
// rebuilds whose reads were in the pass that just ended.
func (r *request) absorb(mb *blk.Bio, jobs []*reconJob) {
	a := r.a
	h := memberOf(mb)
	i, dev := h.index, h.dev
	real := mb.Err != errSkipped
	if real {
		r.t.MemberErrors++
	}
	for _, j := range jobs {
		if i >= j.lo && i < j.hi {
			if real {
				a.mdError(dev)
			}
			j.retry = true
			return
		}
	}
	switch {
	case a.level == Raid0:
		r.setErr(mb.Err)
	case real && !a.mdError(dev): // raid10 keeps the last copy: the error stands
		r.setErr(mb.Err)
	case mb.Op == blk.OpWrite: // the other copies hold the data
	case a.level == Raid6:
		r.t.DegradedReads++
		r.startRecon(&reconJob{target: mb, dev: dev})
	default: // raid10: md_error kept the other copy's member working
		r.t.DegradedReads++
		o := a.otherCopy(dev, mb.Sector)
		h.dev, mb.Sector, mb.Err = o.dev, o.sector, nil
		r.send(nil, o.dev, mb)
	}
}

// startRecon sends j's reads: the stripe units its target covers, from every
// member not faulty now. More than two faulty members lose the data.
func (r *request) startRecon(j *reconJob) {
	a := r.a
	lost := a.Failed()
	if len(lost) > maxRaid6Lost {
		r.setErr(a.dataLost(blk.OpRead, j.target.Sector))
		return
	}
	t := j.target
	j.first = t.Sector &^ (sectorsPerUnit - 1)
	end := (t.Sector + t.Sectors() + sectorsPerUnit - 1) &^ (sectorsPerUnit - 1)
	j.span = uint32(end-j.first) << blk.SectorShift
	j.lost = lost
	if r.data && j.pages == nil {
		j.pages = make([]byte, len(a.members)*int(j.span))
	}
	j.lo = r.bios.n
	for d := range a.members {
		if slices.Contains(lost, d) {
			continue
		}
		mb := r.bios.next(blk.OpRead, d, j.first, endMember, r)
		mb.AddVec(j.page(d), j.span) // at most a page in a new bio: cannot pass 4 GiB
	}
	j.hi = r.bios.n
	r.jobs = append(r.jobs, j)
	// Sent only now: a completion inside SubmitBio may note a failure, which
	// the next pass matches against [lo, hi).
	for i := j.lo; i < j.hi; i++ {
		r.send(nil, r.bios.bios[i].dev, r.bios.bio(i))
	}
}

// page returns j's buffer for member dev, or nil without data.
func (j *reconJob) page(dev int) []byte {
	if j.pages == nil {
		return nil
	}
	o := dev * int(j.span)
	return j.pages[o : o+int(j.span) : o+int(j.span)]
}

// finishRecon computes j's missing data units from what its reads brought and
// copies the target's bytes into its vectors. Metadata-only reads compute
// nothing. O(members · span).
func (r *request) finishRecon(j *reconJob) {
	if j.pages == nil {
		return
	}
	a := r.a
	row := j.first >> (a.chunkShift - blk.SectorShift)
	pd, qd := a.parityDevs(row)
	nd := int(a.dataDisks())
	data := make([][]byte, nd)
	var miss []int
	for off := uint32(0); off < j.span; off += pageSize {
		miss = miss[:0]
		for k := range nd {
			d := a.dataDev(row, k)
			data[k] = j.page(d)[off : off+pageSize]
			if slices.Contains(j.lost, d) {
				miss = append(miss, k)
			}
		}
		var p, q []byte
		if !slices.Contains(j.lost, pd) {
			p = j.page(pd)[off : off+pageSize]
		}
		if !slices.Contains(j.lost, qd) {
			q = j.page(qd)[off : off+pageSize]
		}
		recoverData(data, p, q, miss) // at most two members lost: solvable
	}
	src := j.page(j.dev)[(j.target.Sector-j.first)<<blk.SectorShift:]
	for _, v := range j.target.Vecs() {
		src = src[copy(v.Data, src):]
	}
}

// recoverData computes the data units data[k] for k in miss from the others
// and P (p) and Q (q) of one stripe unit, a nil p or q being lost: the raid6
// library's recovery (raid6_datap_recov for a data unit and P lost,
// raid6_2data_recov for two data units; a single data unit with P is the
// xor of raid5's compute_block_1). It returns false, computing nothing, when
// the units lost are more than P and Q can give back. O(len(data) · unit).
func recoverData(data [][]byte, p, q []byte, miss []int) bool {
	switch {
	case len(miss) == 0:
		return true
	case len(miss) > 2 || len(miss) == 2 && (p == nil || q == nil) || p == nil && q == nil:
		return false
	}
	n := len(data[miss[0]])
	// p' = P ⊕ Σ D_k and q' = Q ⊕ Σ g^k·D_k over the units present.
	pp, qq := make([]byte, n), make([]byte, n)
	if p != nil {
		copy(pp, p)
	}
	if q != nil {
		copy(qq, q)
	}
	for k, d := range data {
		if !slices.Contains(miss, k) {
			xorSyndrome(pp, qq, d, k)
		}
	}
	x := miss[0]
	switch {
	case len(miss) == 1 && p != nil: // D_x = p'
		copy(data[x], pp)
	case len(miss) == 1: // D_x = g^-x · q'
		gfMulBytes(data[x], qq, gfInv(gfPow[x]))
	default: // D_x = (q' ⊕ g^y·p') / (g^x ⊕ g^y), D_y = p' ⊕ D_x
		y := miss[1]
		gy := &gfMulTable[gfPow[y]]
		inv := &gfMulTable[gfInv(gfPow[x]^gfPow[y])]
		for i := range n {
			dx := inv[qq[i]^gy[pp[i]]]
			data[x][i], data[y][i] = dx, pp[i]^dx
		}
	}
	return true
}

// gfMulBytes sets dst[i] = c·src[i] in GF(2^8).
func gfMulBytes(dst, src []byte, c byte) {
	row := &gfMulTable[c]
	for i, b := range src {
		dst[i] = row[b]
	}
}

// gfInv returns the inverse of c ≠ 0 in GF(2^8). O(255).
func gfInv(c byte) byte {
	for b := 1; b < 256; b++ {
		if gfMulTable[c][b] == 1 {
			return byte(b)
		}
	}
	panic(fmt.Sprintf("md: %d has no inverse in GF(2^8)", c)) // only 0 has none, and no caller passes 0
}

// stripeFault is a member bio of a stripe that failed, or a read not sent
// because its member had become faulty (mb nil, dev set).
type stripeFault struct {
	sh  *stripeHead
	mb  *blk.Bio
	dev int
	op  blk.Op
}

// degPlan is how a stripe was planned while members were faulty: which
// members were lost then, and whether the lost data units it does not wholly
// overwrite must be rebuilt from the pre-read survivors before the new data
// is copied in.
type degPlan struct {
	on    bool
	recon bool
	lost  []int
}

// noteFault records a failed or skipped member I/O of sh for advance.
func (b *batch) noteFault(f stripeFault) {
	b.mu.Lock()
	b.failed = append(b.failed, f)
	b.mu.Unlock()
}

// absorbFaults runs md_error for every member whose stripe I/O failed in the
// round that just ended (raid5_end_read_request and raid5_end_write_request,
// then raid5_error): a stripe whose pre-read failed is planned again without
// that member; a failed write needs nothing more, the stripe's data being in
// the parity the other members got. A stripe that would need more than two
// lost members gets ErrDataLost. Called when the round has completed.
func (b *batch) absorbFaults() {
	b.mu.Lock()
	faults := b.failed
	b.failed = nil
	b.mu.Unlock()
	a := b.a
	for _, f := range faults {
		dev := f.dev
		if f.mb != nil {
			dev = memberOf(f.mb).dev
			b.t.MemberErrors++
		}
		a.mdError(dev)
		b.mu.Lock()
		switch {
		case a.Degraded() > maxRaid6Lost:
			if f.sh.err == nil {
				f.sh.err = a.dataLost(f.op, a.rowSector(f.sh.row)+f.sh.unit<<(pageShift-blk.SectorShift))
			}
		case f.op == blk.OpRead && f.sh.step == stepRead:
			f.sh.step = stepReplan
		}
		b.mu.Unlock()
	}
}

// planDegraded models handle_stripe_dirtying for a stripe with lost members
// (v5.10, simplified): reconstruct-write always. Every working data unit not
// wholly overwritten is pre-read; if a lost data unit is not wholly
// overwritten, its old contents are needed for the new parity, so every
// working member is pre-read (P and Q too) to rebuild it. Writes then skip
// the lost members. The kernel may choose read-modify-write when a lost unit
// is not needed by it; the data written is the same, the pre-reads may
// differ. count adds the stripe to the counters (not when it is planned again
// after a failed pre-read). More than two lost members: the stripe fails.
func (b *batch) planDegraded(i int, sh *stripeHead, count bool) {
	a := b.a
	if len(b.plans) < len(b.stripes) {
		b.plans = append(b.plans, make([]degPlan, len(b.stripes)-len(b.plans))...)
	}
	pl := &b.plans[i]
	pl.lost = a.Failed()
	sh.rmw = false
	if len(pl.lost) > maxRaid6Lost {
		b.mu.Lock()
		sh.err = a.dataLost(blk.OpWrite, a.rowSector(sh.row)+sh.unit<<(pageShift-blk.SectorShift))
		sh.step = stepDone
		b.mu.Unlock()
		return
	}
	pl.on, pl.recon = true, false
	for k, m := range sh.cover {
		if m != fullUnit && slices.Contains(pl.lost, a.dataDev(sh.row, k)) {
			pl.recon = true
		}
	}
	var reads []int
	for k, m := range sh.cover {
		if d := a.dataDev(sh.row, k); !slices.Contains(pl.lost, d) && (pl.recon || m != fullUnit) {
			reads = append(reads, d)
		}
	}
	if pl.recon {
		pd, qd := a.parityDevs(sh.row)
		for _, d := range [2]int{pd, qd} {
			if !slices.Contains(pl.lost, d) {
				reads = append(reads, d)
			}
		}
	}
	if count {
		b.t.Stripes++
		b.t.ParityBytes += 2 * pageSize
		if len(reads) == 0 {
			b.t.FullStripeWrites++
		} else {
			b.t.RMWWrites++
			b.t.ReconstructWrites++
		}
	}
	if len(reads) == 0 {
		b.write(i, sh)
		return
	}
	sh.step = stepRead
	for _, d := range reads {
		b.unitIO(sh, blk.OpRead, d)
	}
}

// rebuildLost computes the old contents of the lost data units of a stripe
// planned with recon from the pre-read pages of the working members (before
// the new data is copied in).
func (b *batch) rebuildLost(i int, sh *stripeHead) {
	if i >= len(b.plans) || !b.plans[i].recon {
		return
	}
	a, pl := b.a, &b.plans[i]
	pd, qd := a.parityDevs(sh.row)
	b.units = b.units[:0]
	var miss []int
	for k := range sh.cover {
		d := a.dataDev(sh.row, k)
		b.units = append(b.units, sh.page(d))
		if slices.Contains(pl.lost, d) {
			miss = append(miss, k)
		}
	}
	var p, q []byte
	if !slices.Contains(pl.lost, pd) {
		p = sh.page(pd)
	}
	if !slices.Contains(pl.lost, qd) {
		q = sh.page(qd)
	}
	recoverData(b.units, p, q, miss) // at most two members lost: solvable
}
