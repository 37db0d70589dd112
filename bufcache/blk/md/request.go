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
	devs []int      // the member of each of bios, in order

	// Degraded operation (recover): member bios that failed or met a faulty
	// member, guarded by mu, and the raid6 rebuilds whose reads are in flight.
	failed []*blk.Bio
	jobs   []*reconJob
}

// memberBios is a reusable set of member bios: the ones a request or a stripe
// batch has issued since it was last reset.
type memberBios struct {
	bios []*blk.Bio
	n    int // bios[:n] are in use
}

// next returns a free member bio for op at member sector sector that completes
// into endIO, with Private set to private. It allocates only when every bio
// made so far is in use.
func (m *memberBios) next(op blk.Op, sector uint64, endIO func(*blk.Bio), private any) *blk.Bio {
	if m.n == len(m.bios) {
		m.bios = append(m.bios, new(blk.Bio))
	}
	mb := m.bios[m.n]
	m.n++
	mb.Reset(op, sector)
	mb.EndIO, mb.Private = endIO, private
	return mb
}

// reset frees every member bio, dropping its references to memory and owner.
func (m *memberBios) reset() {
	for _, mb := range m.bios[:m.n] {
		mb.Reset(blk.OpRead, 0)
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
	r.devs, r.failed, r.jobs = r.devs[:0], nil, nil
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
	r := mb.Private.(*request)
	if mb.Err != nil {
		r.addFailed(mb)
	}
	r.done(nil)
}

// submit sends mapped member bio mb to member dev, through r.plug. To a
// faulty member nothing is sent: a write skips it (the other copy is
// written), a read is noted for recover, which serves it another way.
func (r *request) submit(dev int, mb *blk.Bio) {
	r.devs = append(r.devs, dev)
	if r.a.faulty(dev) {
		if mb.Op == blk.OpRead {
			mb.Err = errSkipped
			r.addFailed(mb)
		}
		return
	}
	r.t.MemberBios++
	r.pending.Add(1)
	blk.SubmitBio(r.plug, r.a.members[dev], mb)
}
