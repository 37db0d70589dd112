package md

import (
	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// request is an array's private state for one parent bio: raid0's mapping pass,
// raid10's r10bio, or, for a RAID6 write, the count of stripe_heads the bio is
// still attached to (the bio's __bi_remaining, raised by add_stripe_bio's
// bio_inc_remaining in v5.10; bi_phys_segments in older kernels). The parent
// completes when the last thing it waits for has completed. Requests and their
// member bios are recycled through the array's free list, so a steady stream of
// I/O allocates nothing.
type request struct {
	a          *Array
	parent     *blk.Bio
	start, end uint64 // the parent's array byte range
	data       bool   // the parent's vectors carry data
	// plug is the submitter's plug that mapped member bios go through (raid0
	// and raid10 writes), or nil.
	plug *blk.Plug

	// pending counts what the parent waits for — member bios in flight (mapped
	// I/O) or stripe attachments not yet written (RAID6 writes) — plus one while
	// the request is being issued, so that completions cannot end it early.
	pending conc.Int32
	mu      conc.Mutex // guards err: completions may come from any goroutine (but a confined array's)
	err     error      // the first error

	t    Stats      // this request's counters, added to the array's when it completes
	bios memberBios // mapped I/O: the member bios

	// Degraded operation (recover): member bios that failed or met a faulty
	// member, guarded by mu, and the raid6 rebuilds whose reads are in flight.
	failed []*blk.Bio
	jobs   []*reconJob
}

// memberBio is one member bio with what its issuer keeps beside it, as
// raid10's r10bio keeps devs[slot].devnum beside devs[slot].bio: the member
// it goes to, the issuer's own state (the request or stripe_head whose
// completion it counts towards) and its place in the set. The bio's Private
// points back here.
type memberBio struct {
	bio   blk.Bio
	dev   int
	owner any
	index int // in its memberBios
}

// memberOf returns the memberBio that holds mb, a bio made by memberBios.next.
func memberOf(mb *blk.Bio) *memberBio { return mb.Private.(*memberBio) }

// memberBios is a reusable set of member bios: the ones a request or a stripe
// batch has issued since it was last reset.
type memberBios struct {
	bios []*memberBio
	n    int // bios[:n] are in use
}

// next returns a free member bio for op at sector sector of member dev that
// completes into endIO, with owner as its issuer's state (memberOf(mb).owner).
// It allocates only when every bio made so far is in use.
func (m *memberBios) next(op blk.Op, dev int, sector uint64, endIO func(*blk.Bio), owner any) *blk.Bio {
	if m.n == len(m.bios) {
		m.bios = append(m.bios, &memberBio{index: m.n})
	}
	h := m.bios[m.n]
	m.n++
	h.bio.Reset(op, sector)
	h.bio.EndIO, h.bio.Private = endIO, h
	h.dev, h.owner = dev, owner
	return &h.bio
}

// bio returns the i-th bio in use (i < n).
func (m *memberBios) bio(i int) *blk.Bio { return &m.bios[i].bio }

// reset frees every member bio, dropping its references to memory and owner.
func (m *memberBios) reset() {
	for _, h := range m.bios[:m.n] {
		h.bio.Reset(blk.OpRead, 0)
		h.owner = nil
	}
	m.n = 0
}

// get takes a request from the free list or makes one.
func (a *Array) get() *request {
	a.mu.Lock()
	r := a.free.Get()
	a.mu.Unlock()
	if r == nil {
		r = &request{a: a}
		if a.confined {
			r.pending.Confine()
			r.mu.Confine()
		}
	}
	return r
}

// put adds r's counters to the array's and returns r to the free list, dropping
// its references to the parent and its memory.
func (a *Array) put(r *request) {
	r.bios.reset()
	t := r.t
	r.parent, r.plug, r.err, r.t = nil, nil, nil, Stats{}
	r.failed, r.jobs = nil, nil
	a.mu.Lock()
	a.stats.add(&t)
	a.free.Put(r)
	a.mu.Unlock()
}

// done ends one thing the parent waits for, with err (nil on success). When
// the last one has ended, failed member bios are recovered from (recover), in
// a new pass if need be; after the last pass the parent completes with the
// first error, after the request's counters are added to the array's.
func (r *request) done(err error) {
	if err != nil {
		r.setErr(err)
	}
	if r.pending.Add(-1) != 0 || r.recover() {
		return
	}
	r.mu.Lock()
	err = r.err
	r.mu.Unlock()
	a, parent := r.a, r.parent
	a.put(r)
	parent.Complete(err)
}

// mapBio sends a read, or a raid0/raid10 write, to the members chunk by chunk
// (issueMapped). The parent completes when the last member bio has, on the
// goroutine that completes it.
func (r *request) mapBio() {
	r.pending.Store(1)
	r.issueMapped()
	r.done(nil)
}

// endMember is the EndIO of a mapped member bio: a failure is noted for
// recover.
func endMember(mb *blk.Bio) {
	h := memberOf(mb)
	r := h.owner.(*request)
	r.a.mirrorDone(h)
	if mb.Err != nil {
		r.addFailed(mb)
	}
	r.done(nil)
}

// submit sends mapped member bio mb to its member dev, through r.plug. To a
// faulty member nothing is sent: a write skips it (the other copy is
// written), a read is noted for recover, which serves it another way.
func (r *request) submit(dev int, mb *blk.Bio) {
	if r.a.faulty(dev) {
		if mb.Op == blk.OpRead {
			mb.Err = errSkipped
			r.addFailed(mb)
		}
		return
	}
	r.send(r.plug, dev, mb)
}

// send submits member bio mb to its member dev (memberOf(mb).dev) through
// plug p (nil for none), counting it in the request's and the member's
// in-flight I/O.
func (r *request) send(p *blk.Plug, dev int, mb *blk.Bio) {
	r.t.MemberBios++
	r.pending.Add(1)
	r.a.mirrorStart(dev)
	blk.SubmitBio(p, r.a.members[dev], mb)
}
