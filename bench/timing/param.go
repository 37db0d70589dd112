package timing

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
)

// Param names one primitive cost of a Profile: the price of a bufcache
// event, the measuring harness's own cost per timed call (ParamTimer), or
// the price of one count of the layers beneath the buffer cache.
type Param int

// Parameters beyond the bufcache events. Values below ParamTimer are bufcache
// events; the block-layer and md parameters price the counters of the layers
// beneath the buffer cache (blk.QueueStats, md.Stats), which have no simulated
// CPU of their own: a timing model charges them to a resource (see Load).
const (
	// ParamTimer is the cost the measuring harness adds to every timed call: in
	// Tosatti's module, the ktime_get() that closes one interval and the loop
	// around it.
	ParamTimer = Param(bufcache.NumEvents) + iota
	// ParamRequest is one request through blk-mq and the disk driver:
	// allocation, dispatch, the completion interrupt and blk_mq_end_request
	// (blk.OpStats.Requests).
	ParamRequest
	// ParamMDBio is one pass of a bio through md_submit_bio and the
	// personality's mapping (md.Stats.BiosIn + Splits).
	ParamMDBio
	// ParamMemberBio is one bio md sends to a member: clone or remap,
	// submit_bio_noacct, and its completion (md.Stats.MemberBios).
	ParamMemberBio
	// ParamMDWriteBio is a redundant level's per-bio write bookkeeping:
	// md_write_start/end, the write-intent bitmap's start/end, raid10's r10bio
	// and barrier (md.Stats.WriteBios).
	ParamMDWriteBio
	// ParamStripeAttach is add_stripe_bio: one bio attached to one RAID6
	// stripe_head (md.Stats.StripeAttach).
	ParamStripeAttach
	// ParamStripe is one handle_stripe in raid5d: state analysis, biodrain,
	// ops_run_io and the stripe's release (md.Stats.Stripes).
	ParamStripe
	// ParamParityByte is one byte of RAID6 P or Q computed (md.Stats.ParityBytes).
	ParamParityByte
	// paramEnd ends the list.
	paramEnd
)

// NumParams is the number of Params: the length of Quantities and of a
// Profile's cost table.
const NumParams = int(paramEnd)

// Quantities holds one amount per Param: the events a CPU counted, the timed
// calls of a harness, the block-layer and md counts charged to a resource.
// Priced by a Profile, they are simulated time.
type Quantities [NumParams]float64

// Ev returns the Param that prices event e.
func Ev(e bufcache.Event) Param { return Param(e) }

var extraParamNames = [...]string{"timer", "requests", "md-bios", "member-bios", "md-write-bios",
	"stripe-attaches", "stripes", "parity-bytes"}

// String returns the event's name or the extra parameter's ("timer",
// "requests", "md-bios", ...).
func (p Param) String() string {
	if p >= ParamTimer && int(p) < NumParams {
		return extraParamNames[p-ParamTimer]
	}
	return bufcache.Event(p).String()
}

// ParseParam returns the Param whose String is s. The error lists the extra
// parameters' names (event names are bufcache's).
func ParseParam(s string) (Param, error) {
	for i, n := range extraParamNames {
		if n == s {
			return ParamTimer + Param(i), nil
		}
	}
	e, err := bufcache.ParseEvent(s)
	if err != nil {
		return 0, fmt.Errorf("timing: unknown parameter %q (an event name or one of %s)", s, strings.Join(extraParamNames[:], ", "))
	}
	return Param(e), nil
}

// PerOp converts events recorded over ops operations, with timed calls per
// operation, into per-operation quantities. ops must be positive.
func PerOp(ev bufcache.Counters, ops int, timed float64) Quantities {
	var q Quantities
	for e, n := range ev {
		q[e] = float64(n) / float64(ops)
	}
	q[ParamTimer] = timed
	return q
}
