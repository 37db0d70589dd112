package md

import (
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// phase is the round of member bios a request issues next.
type phase uint8

const (
	// phaseMap: a read, or a raid0/raid10 write: one round of member bios mapped
	// chunk by chunk.
	phaseMap phase = iota
	// phasePreRead: a RAID6 write reading what its parity computation needs.
	phasePreRead
	// phaseWrite: a RAID6 write writing data units, P and Q.
	phaseWrite
)

// request is an array's private state for one parent bio, the counterpart of
// raid10's r10bio or the set of stripe_heads a raid5 bio is attached to. It
// issues rounds of member bios; the parent completes when the last round has
// completed. Requests and their member bios are recycled through the array's
// free list, so a steady stream of I/O allocates nothing.
type request struct {
	a          *Array
	parent     *blk.Bio
	start, end uint64 // the parent's array byte range
	data       bool   // the parent's vectors carry data
	phase      phase
	locked     bool // holds a.stripeMu
	// plug is the submitter's plug that member bios go through (raid0 and
	// raid10 writes), or nil.
	plug *blk.Plug

	// pending counts member bios in flight, plus one while a round is being
	// issued so that completions inside a member's Submit cannot end the round
	// early (the kernel's bio_inc_remaining / md's pending counts play this part).
	pending atomic.Int32
	mu      sync.Mutex // guards err: completions may come from any goroutine
	err     error      // the first member error

	t Stats // this request's counters, added to the array's when it completes

	bios    []*blk.Bio // member bios; the first nbios are in use
	nbios   int
	stripes []stripe // RAID6 write: the stripe units touched, in order
	pages   []byte   // RAID6 write with data: the stripe cache, one page per member per stripe
	units   [][]byte // RAID6 write with data: one stripe's data units, for genSyndrome
}

// get takes a request from the free list or makes one.
func (a *Array) get() *request {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.free); n > 0 {
		r := a.free[n-1]
		a.free = a.free[:n-1]
		return r
	}
	return &request{a: a}
}

// put adds r's counters to the array's and returns r to the free list, dropping
// its member bios' references to the parent's memory.
func (a *Array) put(r *request) {
	for _, mb := range r.bios[:r.nbios] {
		mb.Reset(blk.OpRead, 0)
	}
	t := r.t
	r.parent, r.err, r.t, r.nbios, r.locked = nil, nil, Stats{}, 0, false
	a.mu.Lock()
	a.stats.add(&t)
	a.free = append(a.free, r)
	a.mu.Unlock()
}

// run issues rounds until one is left in flight, whose last completion carries
// the request on (endMember), or until the parent has completed. Members that
// complete inside Submit, as MemDisk does, leave the whole request to this loop
// on the submitting goroutine.
func (r *request) run() {
	for {
		r.pending.Store(1)
		switch r.phase {
		case phaseMap:
			r.issueMapped()
		case phasePreRead:
			r.issueStripes(blk.OpRead)
		case phaseWrite:
			r.issueStripes(blk.OpWrite)
		}
		if r.pending.Add(-1) != 0 || !r.advance() {
			return
		}
	}
}

// endMember is every member bio's EndIO: it records an error and, for the last
// bio of a round, carries the request on.
func endMember(mb *blk.Bio) {
	r := mb.Private.(*request)
	if mb.Err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = mb.Err
		}
		r.mu.Unlock()
	}
	if r.pending.Add(-1) == 0 && r.advance() {
		r.run()
	}
}

// advance is called when a round has completed. After a successful RAID6
// pre-read it computes the parity and returns true: the write round follows.
// Otherwise it completes the parent, with the first member error if any (no
// member has redundancy to cover an error until degraded operation is
// modelled), and returns false.
func (r *request) advance() bool {
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if r.phase == phasePreRead && err == nil {
		r.computeParity()
		r.phase = phaseWrite
		return true
	}
	a, parent := r.a, r.parent
	if r.locked {
		a.stripeMu.Unlock()
	}
	a.put(r)
	parent.Complete(err)
	return false
}

// newBio returns a member bio for op at member sector sector that completes
// into endMember.
func (r *request) newBio(op blk.Op, sector uint64) *blk.Bio {
	if r.nbios == len(r.bios) {
		r.bios = append(r.bios, new(blk.Bio))
	}
	mb := r.bios[r.nbios]
	r.nbios++
	mb.Reset(op, sector)
	mb.EndIO, mb.Private = endMember, r
	return mb
}

// submit sends mb to member dev.
func (r *request) submit(dev int, mb *blk.Bio) {
	r.t.MemberBios++
	r.pending.Add(1)
	blk.SubmitBio(r.plug, r.a.members[dev], mb)
}
