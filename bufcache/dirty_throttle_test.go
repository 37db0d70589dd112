package bufcache

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirtyThrottleLimits: the thresholds are the ratios of the dirtyable
// memory in the kernel's per-page precision (20 % is 819/4096, 10 % is
// 409/4096), and max_bytes becomes a ratio of the threshold in millionths,
// which the device's share is then cut to (rounding down twice).
func TestDirtyThrottleLimits(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		l                                 DirtyLimits
		thresh, bg, wbThresh, wbBg, chunk int64
	}{
		{"defaults: chunks of half the first bandwidth estimate", DirtyLimits{Dirtyable: 4096000}, 819000, 409000, 819000, 409000, 13312},
		{"max_bytes 4 MiB", DirtyLimits{Dirtyable: 4096000, MaxBytes: 4 << 20}, 819000, 409000, 1023, 510, 13312},
		{"a background ratio above the ratio is half of it", DirtyLimits{Dirtyable: 4096000, Ratio: 10, BackgroundRatio: 30}, 409000, 204500, 409000, 204500, 13312},
		{"a small machine: chunks of an eighth of the limit, at least 4 MiB", DirtyLimits{Dirtyable: 25600}, 5118, 2556, 5118, 2556, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDirtyThrottle(tc.l)
			require.NoError(t, err)
			thresh, bg, wb, wbBg := d.Thresholds()
			assert.Equal(t, []int64{tc.thresh, tc.bg, tc.wbThresh, tc.wbBg}, []int64{thresh, bg, wb, wbBg})
			assert.Equal(t, tc.chunk, d.ChunkPages())
		})
	}
}

// TestDirtyThrottleRefuses: the limits bdi_set_max_bytes and the sysctls
// refuse.
func TestDirtyThrottleRefuses(t *testing.T) {
	for _, l := range []DirtyLimits{
		{},
		{Dirtyable: 1000, Ratio: 101},
		{Dirtyable: 1000, HZ: 5},
		{Dirtyable: 1000, PageSize: 3000},
		{Dirtyable: 1000, MaxBytes: -1},
		{Dirtyable: 4096000, MaxBytes: 4 << 30},      // above the threshold
		{Dirtyable: 1000, MaxBytes: 1 << 30},         // above the dirtyable memory
		{Dirtyable: 4, Ratio: 1, BackgroundRatio: 1}, // a threshold of 0 pages
	} {
		_, err := NewDirtyThrottle(l)
		assert.ErrorIs(t, err, ErrDirtyLimits, "%+v", l)
	}
}

// TestDirtyThrottleBalance: one pass at chosen counts, on a strict 4 MiB
// limit: below the freerun ceiling (3/4 of the share) the writer goes on
// and polls again after about the square root of its distance from the
// limit; past the device's share the rate is 0 and it sleeps max_pause —
// as long as its 1216 pages last at a new bdi's estimate of 100 MB/s, 2
// jiffies — ending on the tick after, and looks again; in between it is paced and
// the flusher woken, and a pause shorter than min_pause is carried over to
// the next pass (dirty_paused_when moves on) instead of slept.
func TestDirtyThrottleBalance(t *testing.T) {
	const tick = 4e6 // ns at HZ=250
	for _, tc := range []struct {
		name      string
		dirtied   int64
		s         DirtyState
		pause     float64
		wake, run bool
	}{
		{"free running", 32, DirtyState{Dirty: 600}, 0, false, false},
		{"at the limit", 208, DirtyState{Dirty: 400, Writeback: 816, Dirtied: 1216}, 3 * tick, true, true},
		{"between ceiling and limit: a pause too short to sleep", 128, DirtyState{Dirty: 500, Writeback: 400, Dirtied: 900}, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDirtyThrottle(DirtyLimits{Dirtyable: 4096000, MaxBytes: 4 << 20, StrictLimit: true})
			require.NoError(t, err)
			task := d.NewTask()
			pages, run := d.Dirtied(&task, tc.dirtied)
			require.True(t, run || tc.dirtied < 32)
			pause, wake, again := d.Balance(&task, pages, 0, tc.s)
			assert.InDelta(t, tc.pause, pause, 1)
			assert.Equal(t, tc.wake, wake)
			assert.Equal(t, tc.run, again)
		})
	}
}

// dirtySim runs a writer against a disk that cleans writeback at rate
// pages a second, for seconds: the writer dirties 16 pages a call of
// callNS of CPU time, and sleeps as Balance says; the flusher, once woken,
// puts every dirty page under writeback each time the writer comes by while
// the device is over its background share. It returns the pages the
// writer dirtied in the second half of the run (the first holds the
// start, which runs free) and the most the device held dirty or under
// writeback.
func dirtySim(t *testing.T, l DirtyLimits, rate, callNS, seconds float64) (dirtied float64, peak int64) {
	d, err := NewDirtyThrottle(l)
	require.NoError(t, err)
	task := d.NewTask()
	var s DirtyState
	var done float64 // pages cleaned so far, fractional
	flusher := false
	now := 0.0
	advance := func(to float64) {
		if to <= now {
			return
		}
		done = min(done+rate*(to-now)/1e9, float64(s.Written+s.Writeback))
		now = to
		w := int64(done) - s.Written
		s.Written += w
		s.Writeback -= w
		d.WritebackProgress(now, s)
		if flusher && d.OverBackground(s) || flusher && s.Dirty > 0 && s.Writeback == 0 {
			s.Writeback += s.Dirty
			s.Dirty = 0
		}
		if !d.OverBackground(s) && s.Writeback > 0 {
			flusher = false
		}
	}
	half := int64(-1)
	for now < seconds*1e9 {
		if half < 0 && now >= seconds*1e9/2 {
			half = s.Dirtied
		}
		advance(now + callNS)
		s.Dirty += 16
		s.Dirtied += 16
		peak = max(peak, s.Dirty+s.Writeback)
		pages, run := d.Dirtied(&task, 16)
		if !run {
			continue
		}
		for {
			pause, wake, again := d.Balance(&task, pages, now, s)
			if wake && !flusher {
				flusher = true
				d.WritebackStarts(now, s)
				s.Writeback += s.Dirty
				s.Dirty = 0
			}
			advance(now + pause)
			if !again {
				break
			}
		}
	}
	return float64(s.Dirtied - half), peak
}

// TestDirtyThrottlePacesTheWriter: whatever the limits, a writer far
// faster than its disk ends up dirtying pages at the disk's rate, and the
// device's dirty and writeback pages stay bounded: near the 4 MiB strict
// share (the writer overshoots it by what it dirties between looks), or
// below the machine's dirty threshold.
func TestDirtyThrottlePacesTheWriter(t *testing.T) {
	const seconds = 30
	for _, tc := range []struct {
		name    string
		l       DirtyLimits
		rate    float64 // pages a second
		maxPeak int64
	}{
		{"strict 4 MiB, 8 MiB/s", DirtyLimits{Dirtyable: 4096000, MaxBytes: 4 << 20, StrictLimit: true}, 2048, 1400},
		{"strict 16 MiB, 32 MiB/s", DirtyLimits{Dirtyable: 4096000, MaxBytes: 16 << 20, StrictLimit: true}, 8192, 5200},
		{"a 100 MiB machine, 8 MiB/s", DirtyLimits{Dirtyable: 25600}, 2048, 5118 + 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirtied, peak := dirtySim(t, tc.l, tc.rate, 20e3, seconds)
			rate := dirtied / (seconds / 2)
			assert.InEpsilon(t, tc.rate, rate, 0.1, "the writer's rate against the disk's")
			assert.LessOrEqual(t, peak, tc.maxPeak)
			assert.False(t, math.IsNaN(rate))
		})
	}
}

// FuzzDirtyThrottle drives a throttle with arbitrary limits and a sequence
// of passes: no limits the kernel would take crash it, a sleep is never
// negative nor longer than MAX_PAUSE and the tick after, a task told to
// look again always slept, and the estimates stay positive.
func FuzzDirtyThrottle(f *testing.F) {
	f.Add(int64(4096000), int64(4<<20), true, uint16(250), []byte{16, 200, 8, 3, 250, 255, 0, 1})
	f.Add(int64(25600), int64(0), false, uint16(1000), []byte{255, 255, 255, 1, 2, 3})
	f.Fuzz(func(t *testing.T, dirtyable, maxBytes int64, strict bool, hz uint16, ops []byte) {
		d, err := NewDirtyThrottle(DirtyLimits{Dirtyable: dirtyable, MaxBytes: maxBytes, StrictLimit: strict, HZ: int(hz), CPUs: 2})
		if err != nil {
			return
		}
		thresh, _, _, _ := d.Thresholds()
		task := d.NewTask()
		var s DirtyState
		now := 0.0
		tick := 1e9 / float64(d.hz)
		for i, b := range ops {
			n := int64(b)
			s.Dirtied += n
			switch i % 3 { // the writer dirties; writeback starts; writeback completes
			case 0:
				s.Dirty += n
			case 1:
				m := min(s.Dirty, n*int64(thresh)/255)
				s.Dirty, s.Writeback = s.Dirty-m, s.Writeback+m
			case 2:
				m := min(s.Writeback, n*int64(thresh)/255)
				s.Writeback, s.Written = s.Writeback-m, s.Written+m
			}
			now += float64(b) * 1e5
			d.WritebackProgress(now, s)
			pages, run := d.Dirtied(&task, n)
			if !run {
				continue
			}
			for look := 0; look < 4; look++ { // a task at the limit looks again with the same pages
				pause, _, again := d.Balance(&task, pages, now, s)
				require.GreaterOrEqual(t, pause, 0.0)
				require.LessOrEqual(t, pause, float64(d.maxPause+2)*tick)
				if again {
					require.Positive(t, pause)
				}
				now += pause
				if !again {
					break
				}
			}
		}
		bw, rate := d.Estimates()
		assert.Positive(t, bw)
		assert.Positive(t, rate)
		assert.Positive(t, d.ChunkPages())
	})
}

// TestDirtyThrottleLooksAgain: a task that slept at the limit looks again
// with the pages it had dirtied (the kernel's loop keeps its
// pages_dirtied): still over the limit it sleeps again; back under the
// freerun ceiling it goes on.
func TestDirtyThrottleLooksAgain(t *testing.T) {
	const tick = 4e6
	d, err := NewDirtyThrottle(DirtyLimits{Dirtyable: 4096000, MaxBytes: 4 << 20, StrictLimit: true})
	require.NoError(t, err)
	task := d.NewTask()
	pages, run := d.Dirtied(&task, 208)
	require.True(t, run)
	over := DirtyState{Dirty: 400, Writeback: 816, Dirtied: 1216}
	pause, _, again := d.Balance(&task, pages, 0, over)
	require.True(t, again)
	require.Positive(t, pause)
	over.Writeback -= 16 // a little written back: still past the 1023-page share
	pause2, _, again2 := d.Balance(&task, pages, pause, over)
	assert.True(t, again2, "still over the limit")
	assert.GreaterOrEqual(t, pause2, tick, "sleeps again")
	under := DirtyState{Dirty: 100, Writeback: 200, Dirtied: 1216, Written: 916}
	pause3, _, again3 := d.Balance(&task, pages, pause+pause2, under)
	assert.False(t, again3)
	assert.Zero(t, pause3, "under the freerun ceiling it goes on")
}
