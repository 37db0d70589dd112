package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stageRig is a 6.18 queue with a throttle stage whose submitter's clock
// the test sets, and a record of the queue's trace events.
type stageRig struct {
	q      *Queue
	now    float64
	events []TraceEvent
	c      *completions
}

func newStageRig(t *testing.T, rules ThrottleRules) *stageRig {
	lim := DefaultLimits(512, 4096)
	lim.MaxSectors = 1024 // 512 KiB, the loop queue's
	lim.Version = Version618
	r := &stageRig{q: newQueue(t, "thr", 64<<20, SSD{MBps: 1000, LatencyNS: 10e3}, lim), c: newCompletions()}
	thr, err := NewThrottle(rules, 0)
	require.NoError(t, err)
	r.q.SetThrottle(thr, func() float64 { return r.now })
	r.q.SetTracer(TraceFunc(func(e TraceEvent) { r.events = append(r.events, e) }))
	return r
}

// write submits the 4 KiB write bio id at page index page through p.
func (r *stageRig) write(p *Plug, id int, page uint64) {
	SubmitBio(p, r.q, r.c.pageBio(id, OpWrite, page*8, 4096, 1000+page, 0))
}

// issued returns the traced requests: their sizes in pages and ready times.
func (r *stageRig) issued() (pages []uint64, ready []float64) {
	for _, e := range r.events {
		if e.Kind == TraceRqIssue {
			pages, ready = append(pages, e.Bytes/4096), append(ready, e.ReadyNS)
		}
	}
	return pages, ready
}

// plugs counts the traced plug events of the task and of the worker.
func (r *stageRig) plugs() (task, worker int) {
	for _, e := range r.events {
		if e.Kind == TracePlug {
			if e.Worker {
				worker++
			} else {
				task++
			}
		}
	}
	return task, worker
}

// roundsOracle is what the stage must do with n consecutive 4 KiB writes
// submitted at time 0 under rules: each bio's leave time from a throttle
// of its own, consecutive bios of one leave time a round, each round cut
// into requests of at most maxPages. It returns the request sizes in pages
// and their ready times.
func roundsOracle(t *testing.T, rules ThrottleRules, n int, maxPages uint64) (pages []uint64, ready []float64) {
	thr, err := NewThrottle(rules, 0)
	require.NoError(t, err)
	for i := range n {
		leave := thr.Submit(0, true, 4096, false)
		if i > 0 && ready[len(ready)-1] == leave && pages[len(pages)-1] < maxPages {
			pages[len(pages)-1]++
			continue
		}
		pages, ready = append(pages, 1), append(ready, leave)
	}
	return pages, ready
}

// TestThrottleStageRoundsFormRequests: under a rule, the bios the throttle
// lets go at one tick merge with each other and with nothing else — the
// task's plug takes those it lets go at once, each later round is the
// kthrotld worker's plug — and every request carries the tick its bios
// left at. Held to a reference grouping of each bio's leave time (from a
// throttle of its own: the leave times are the Throttle's, tested apart;
// what this holds is which requests they form).
func TestThrottleStageRoundsFormRequests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules ThrottleRules
		n     int
	}{
		{"8 MiB/s, 4 MiB", ThrottleRules{WriteBPS: 8 << 20}, 1024},
		{"1 MiB/s, 256 KiB", ThrottleRules{WriteBPS: 1 << 20}, 64},
		{"50 iops, 64 KiB", ThrottleRules{WriteIOPS: 50}, 16},
		{"no write rule", ThrottleRules{ReadBPS: 1 << 20}, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newStageRig(t, tc.rules)
			var p Plug
			p.Start()
			for i := range tc.n {
				r.write(&p, i, uint64(i))
			}
			require.NoError(t, p.Finish())
			p.Wait()
			wantPages, wantReady := roundsOracle(t, tc.rules, tc.n, 128)
			pages, ready := r.issued()
			assert.Equal(t, wantPages, pages, "request sizes")
			assert.Equal(t, wantReady, ready, "ready times")
			assert.Len(t, r.c.order, tc.n, "every bio completed")
			task, worker := r.plugs()
			assert.Positive(t, task, "the task's plug took the first bios")
			if tc.rules.WriteBPS == 0 && tc.rules.WriteIOPS == 0 {
				assert.Zero(t, worker, "nothing held, no worker plug")
			} else {
				assert.Positive(t, worker, "later rounds are the worker's")
			}
		})
	}
}

// TestThrottleStageReleases: a round stays open while its tick's bios
// arrive, and goes when the submitter waits (Plug.Wait), when its caller
// lets time pass (ReleaseThrottled), when a bio passes after it, or at
// once for a submitter without a plug.
func TestThrottleStageReleases(t *testing.T) {
	rules := ThrottleRules{WriteIOPS: 10}
	// burst is more than a slice's allowance at 10 iops: the rest wait.
	const burst = 4
	for _, tc := range []struct {
		name    string
		release func(r *stageRig, p *Plug)
	}{
		{"Plug.Wait", func(_ *stageRig, p *Plug) { p.Wait() }},
		{"ReleaseThrottled", func(r *stageRig, _ *Plug) { r.q.ReleaseThrottled() }},
		{"a bio that passes later", func(r *stageRig, p *Plug) {
			r.now = 10e9 // long after every round
			p.Start()
			r.write(p, 99, 500)
			require.NoError(t, p.Finish())
		}},
		{"a flush of the plug later", func(r *stageRig, p *Plug) {
			r.now = 10e9
			p.Flush()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newStageRig(t, rules)
			var p Plug
			p.Start()
			for i := range burst {
				r.write(&p, i, uint64(2*i)) // not contiguous: one request each
			}
			require.NoError(t, p.Finish())
			done := len(r.c.order)
			require.Less(t, done, burst, "some bios wait in the throttle")
			tc.release(r, &p)
			assert.GreaterOrEqual(t, len(r.c.order), burst, "released")
		})
	}
	t.Run("no plug", func(t *testing.T) {
		r := newStageRig(t, rules)
		for i := range burst {
			r.write(nil, i, uint64(i))
			assert.Len(t, r.c.order, i+1, "a submitter without a plug has its round at once")
		}
		pages, _ := r.issued()
		assert.Equal(t, []uint64{1, 1, 1, 1}, pages, "nothing to merge with")
	})
}

// TestThrottleStageSplitRemainder: a bio the request layer splits has its
// remainder checked again, as a bio of its own under an iops rule, so the
// remainder waits for a later round than its front part.
func TestThrottleStageSplitRemainder(t *testing.T) {
	r := newStageRig(t, ThrottleRules{WriteIOPS: 10})
	var p Plug
	p.Start()
	b := r.c.bio(0, OpWrite, 0)
	for i := range 256 { // 1 MiB: two 512 KiB parts
		require.True(t, b.AddPage(nil, 4096, uint64(i), 0))
	}
	SubmitBio(&p, r.q, b)
	require.NoError(t, p.Finish())
	p.Wait()
	pages, ready := r.issued()
	require.Equal(t, []uint64{128, 128}, pages)
	assert.Zero(t, ready[0], "the front part passes at once")
	assert.Greater(t, ready[1], ready[0], "the remainder waits")
	assert.Equal(t, []int{0}, r.c.order, "the bio completed once")
}

// FuzzThrottleStage drives a throttled queue with any sequence of reads and
// writes of any size and place, plugged or not, with the submitter's time
// moving on, waits and releases between them: every bio completes exactly
// once, and the requests carry every sector the bios did, no more.
func FuzzThrottleStage(f *testing.F) {
	f.Add([]byte{0, 8, 1, 8, 2, 3, 0, 200, 4, 5})
	f.Add([]byte{1, 255, 1, 255, 1, 255, 6, 0, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		r := newStageRig(t, ThrottleRules{ReadBPS: 1 << 20, WriteIOPS: 50})
		var p Plug
		want, id := uint64(0), 0
		for i := 0; i+1 < len(ops); i += 2 {
			arg := uint64(ops[i+1])
			switch ops[i] % 7 {
			case 0, 1: // a bio of 1..256 pages at page arg*3
				op := OpWrite
				if ops[i]%7 == 1 {
					op = OpRead
				}
				b := r.c.bio(id, op, arg*3*8)
				for k := range arg%256 + 1 {
					require.True(t, b.AddPage(nil, 4096, 5000+arg*300+k, 0))
				}
				want += b.Sectors()
				SubmitBio(&p, r.q, b)
				id++
			case 2:
				p.Start()
			case 3:
				_ = p.Finish()
			case 4:
				r.now += float64(arg) * 1e6
			case 5:
				p.Wait()
			case 6:
				r.q.ReleaseThrottled()
			}
		}
		for p.Active() {
			require.NoError(t, p.Finish())
		}
		p.Wait()
		r.q.ReleaseThrottled()
		require.Len(t, r.c.count, id, "every bio completed")
		for i, n := range r.c.count {
			assert.Equal(t, 1, n, "bio %d completions", i)
		}
		var got uint64
		for _, e := range r.events {
			if e.Kind == TraceRqIssue {
				got += e.Bytes >> SectorShift
			}
		}
		assert.Equal(t, want, got, "sectors of the requests")
	})
}

// TestThrottleStageTickOrder: requests reach the device in the order of
// their ticks — reads and writes held under rules of their own, and the
// remainders of split bios, which a byte rule does not charge: the worker
// resubmits a held part's remainder, so it joins that part's round rather
// than the task's plug.
func TestThrottleStageTickOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules ThrottleRules
		pages uint64 // each bio's
		ops   []Op
	}{
		{"reads and writes", ThrottleRules{ReadIOPS: 100, WriteIOPS: 10}, 1,
			[]Op{OpWrite, OpRead, OpWrite, OpRead, OpWrite, OpRead, OpRead, OpWrite, OpRead, OpRead, OpRead, OpRead, OpRead, OpRead, OpRead, OpRead, OpRead}},
		{"split 1 MiB writes, byte rule", ThrottleRules{WriteBPS: 1 << 20}, 256, []Op{OpWrite, OpWrite, OpWrite}},
		{"split 1 MiB writes, bio rule", ThrottleRules{WriteIOPS: 10}, 256, []Op{OpWrite, OpWrite, OpWrite, OpWrite}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newStageRig(t, tc.rules)
			var p Plug
			p.Start()
			next := [2]uint64{0, 1 << 13} // reads and writes 32 MiB apart
			for i, op := range tc.ops {
				d := 0
				if op == OpWrite {
					d = 1
				}
				b := r.c.bio(i, op, next[d]*8)
				for k := range tc.pages {
					require.True(t, b.AddPage(nil, 4096, 7000+next[d]+k, 0))
				}
				next[d] += tc.pages
				SubmitBio(&p, r.q, b)
			}
			require.NoError(t, p.Finish())
			p.Wait()
			_, ready := r.issued()
			require.NotEmpty(t, ready)
			assert.IsNonDecreasing(t, ready, "issued in tick order")
			task, _ := r.plugs()
			assert.LessOrEqual(t, task, 1, "only what passed at once is the task's")
			assert.Len(t, r.c.order, len(tc.ops), "every bio completed")
		})
	}
}

// TestReleaseThrottledUntil: the rounds whose ticks have come by t go out,
// in tick order, and the later ones stay held, as kthrotld's timer
// dispatches them while the submitter sleeps without waiting for I/O.
func TestReleaseThrottledUntil(t *testing.T) {
	rules := ThrottleRules{WriteBPS: 400 << 10} // 40 KiB a slice: rounds of 10 pages
	const n = 35
	r := newStageRig(t, rules)
	var p Plug
	p.Start()
	for i := range n {
		r.write(&p, i, uint64(2*i)) // unmergeable: a request each
	}
	require.NoError(t, p.Finish())
	_, want := roundsOracle(t, rules, n, 1)
	_, got := r.issued()
	first := len(got)
	require.Less(t, first, n, "later rounds are held")
	for k := first; k < n; {
		tick := want[k]
		r.q.ReleaseThrottledUntil(tick - 1)
		_, got = r.issued()
		require.Len(t, got, k, "nothing before the tick %v", tick)
		r.q.ReleaseThrottledUntil(tick)
		for k < n && want[k] == tick {
			k++
		}
		_, got = r.issued()
		assert.Equal(t, want[:k], got, "the rounds due by %v, in order", tick)
	}
}
