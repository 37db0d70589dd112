package bufcache

import (
	"errors"
	"fmt"
	"math/bits"
)

// Dirty throttling: how fast a writer may dirty the page cache.
//
// A write(2) to a block device only copies into the page cache; the data
// reaches the disk later, by background writeback (the flusher) or a sync.
// Left alone, a fast writer would fill memory with dirty pages the disk
// takes minutes to clean, so every task that dirties pages calls
// balance_dirty_pages_ratelimited, and every so often (nr_dirtied_pause
// pages) balance_dirty_pages (mm/page-writeback.c) weighs the dirty pages
// against two thresholds and may put the task to sleep:
//
//   - the dirty threshold (vm.dirty_ratio, 20 % of dirtyable memory) and the
//     background threshold (vm.dirty_background_ratio, 10 %). Below their
//     mean, the freerun ceiling, a writer runs free; above the background
//     threshold the flusher is woken to write back; between the ceiling
//     and the threshold the writer is paced. "Dirty" counts the pages
//     under writeback too (NR_FILE_DIRTY + NR_WRITEBACK);
//   - each device (its bdi_writeback) gets a share of the thresholds:
//     its part of recent writeback completions (the model's one device has
//     all of them), capped by the bdi's max_ratio, which
//     /sys/class/bdi/MAJ:MIN/max_bytes sets as a fraction of the dirty
//     threshold. With strict_limit the device's own counts and share decide
//     instead of the machine's: a writer to it is paced as soon as its
//     share's freerun ceiling is passed, however little the machine holds;
//   - the pace: a rate limit per device, dirty_ratelimit (it starts at
//     100 MB/s and tracks the measured write bandwidth), scaled by a
//     position ratio, a cubic in the distance of the dirty pages from a
//     setpoint between the ceiling and the limit (1 at the setpoint, 2 at
//     the ceiling, 0 at the limit). A writer that dirtied N pages sleeps
//     N / (dirty_ratelimit · pos_ratio), less the time it spent since its
//     last pause, at most max_pause (200 ms, less on a fast device with few
//     dirty pages), and comes back after nr_dirtied_pause more pages; at the
//     limit the ratio is 0 and it sleeps max_pause and looks again.
//
// DirtyThrottle is that control law for one writing task and one device,
// in simulated time: the caller (the model's clock, package bench/engine)
// tells it the time and the device's counts, and it answers how long the
// task sleeps and whether the flusher must start. It models
// balance_dirty_pages_ratelimited_flags, balance_dirty_pages,
// domain_dirty_limits, __wb_calc_thresh, wb_dirty_limits,
// wb_position_ratio, pos_ratio_polynom, __wb_update_bandwidth,
// wb_update_dirty_ratelimit, wb_update_write_bandwidth, wb_max_pause,
// wb_min_pause, dirty_poll_interval, wb_over_bg_thresh and
// writeback_chunk_size of Linux 6.18, in jiffies and pages with the
// kernel's integer arithmetic.
//
// Simplifications, each stated: the device has every recent writeback
// completion of the machine, so its share of the thresholds is whole,
// capped by max_bytes (6.13 and later floor a share at a hundredth, or
// under strict_limit an eighth, of the threshold's headroom: a whole share
// is above the floor; but a new bdi's share starts at 0 and grows with its
// completions, so on the kernel strict_limit without max_bytes first holds
// a writer to that floor, where the model holds it to the whole);
// max_bytes is a ratio of the threshold the model runs with, where the
// kernel keeps the ratio of the threshold it had when max_bytes was
// written (4 MiB read back as 4,192,596 bytes on the recording machine);
// the machine dirties no other device, so the global counts are the device's;
// the dirtyable memory is fixed, so the domain's dirty_limit stays the
// threshold; no memory cgroup; the writer is not a real-time task; the
// device's bdi is new at time 0 (bdi_init: the rate estimates at INIT_BW,
// stamped then), as the host runner's loop device is, made for the run
// with LOOP_CTL_ADD (a bdi idle for longer than the estimate's 3-second
// period would instead start from an estimate near 0, and pause its
// writers for MAX_PAUSE, 200 ms, until it grew); the write bandwidth is
// estimated at the writers' looks and as the caller reports writeback
// progress (WritebackProgress), where the kernel also estimates it as
// writepages submits and 200 ms after an inode's writeback ends; a sleep
// of p jiffies ends on the (p+1)-th tick, as the timer wheel fires a timer
// one jiffy after its expiry (as blk.Throttle's does).
//
// A DirtyThrottle is driven by one goroutine; it allocates nothing after
// NewDirtyThrottle.
type DirtyThrottle struct {
	hz       int64
	tickNS   float64
	poll     int64 // DIRTY_POLL_THRESH in pages: 128 KiB
	minWB    int64 // MIN_WRITEBACK_PAGES: 4 MiB
	initBW   int64 // INIT_BW: 100 MB/s, in pages a second
	statErr  int64 // wb_stat_error: the per-CPU counters' possible drift
	maxPause int64 // MAX_PAUSE: HZ/5

	thresh, bgThresh     int64 // the domain's, pages
	wbThresh, wbBgThresh int64 // the device's share
	strict               bool
	ratelimitPages       int64 // ratelimit_pages

	// The device's bdi_writeback: rate estimates (pages a second) and the
	// counts at the last estimate.
	dirtyRatelimit, balancedRatelimit int64
	writeBW, avgWriteBW               int64
	bwStamp                           int64 // jiffies
	dirtiedStamp, writtenStamp        int64
	dirtyExceeded                     bool
}

// DirtyTask is one writing task's throttling state (current->nr_dirtied,
// nr_dirtied_pause, dirty_paused_when), with its CPU's bdp_ratelimits: the
// model runs one task per CPU. Make one with DirtyThrottle.NewTask.
type DirtyTask struct {
	nrDirtied, nrDirtiedPause int64
	pausedWhen                int64 // jiffies; 0: never paused
	cpuDirtied                int64
}

// NewTask returns the state of a task that has not dirtied anything yet
// (INIT_TASK's nr_dirtied_pause: 128 KiB of pages). O(1).
func (t *DirtyThrottle) NewTask() DirtyTask { return DirtyTask{nrDirtiedPause: t.poll} }

// DirtyLimits configure a DirtyThrottle: the machine's dirty thresholds and
// the device's per-bdi limits.
type DirtyLimits struct {
	// Dirtyable is global_dirtyable_memory in pages: free pages and the page
	// cache's file pages; the thresholds are ratios of it. Required.
	Dirtyable int64
	// Ratio and BackgroundRatio are vm.dirty_ratio and
	// vm.dirty_background_ratio in per cent (0 means the defaults, 20 and 10).
	Ratio, BackgroundRatio int
	// MaxBytes is the bdi's max_bytes (0: none, max_ratio 100 %): the
	// kernel keeps it as a ratio of the dirty threshold, in millionths.
	MaxBytes int64
	// StrictLimit is the bdi's strict_limit.
	StrictLimit bool
	// HZ is the jiffy rate (0: 250, as blk.DefaultHZ); PageSize the page
	// size in bytes (0: 4096); CPUs the machine's CPUs (0: 1), which scale
	// ratelimit_pages and wb_stat_error.
	HZ       int
	PageSize uint32
	CPUs     int
}

// ErrDirtyLimits is wrapped by NewDirtyThrottle's errors.
var ErrDirtyLimits = errors.New("bufcache: invalid dirty limits")

// bdiRatioScale is BDI_RATIO_SCALE: a bdi's ratios are in parts of
// 100·10000 (millionths).
const bdiRatioScale = 10000

// NewDirtyThrottle returns the throttle of limits l for a device that has
// not been written yet. Errors (wrapping ErrDirtyLimits): no dirtyable
// memory, a ratio above 100, a HZ outside 24..10000, a page size that is
// not a power of two of at least 4096, and a MaxBytes above the dirty
// threshold or the dirtyable memory (bdi_set_max_bytes's EINVAL). O(1).
func NewDirtyThrottle(l DirtyLimits) (*DirtyThrottle, error) {
	bad := func(format string, args ...any) (*DirtyThrottle, error) {
		return nil, fmt.Errorf("%w: %s", ErrDirtyLimits, fmt.Sprintf(format, args...))
	}
	if l.Ratio == 0 {
		l.Ratio = 20
	}
	if l.BackgroundRatio == 0 {
		l.BackgroundRatio = 10
	}
	if l.HZ == 0 {
		l.HZ = 250
	}
	if l.PageSize == 0 {
		l.PageSize = 4096
	}
	if l.CPUs <= 0 {
		l.CPUs = 1
	}
	switch {
	case l.Dirtyable <= 0:
		return bad("dirtyable memory of %d pages", l.Dirtyable)
	case l.Ratio > 100 || l.BackgroundRatio > 100 || l.Ratio < 0 || l.BackgroundRatio < 0:
		return bad("dirty ratios %d %% and %d %% (want 0 to 100)", l.Ratio, l.BackgroundRatio)
	case l.HZ < 24 || l.HZ > 10000:
		return bad("HZ %d (want 24 to 10000)", l.HZ)
	case l.PageSize < 4096 || l.PageSize&(l.PageSize-1) != 0:
		return bad("page size %d", l.PageSize)
	case l.MaxBytes < 0:
		return bad("max_bytes %d", l.MaxBytes)
	}
	pageShift := uint(bits.TrailingZeros32(l.PageSize))
	hz := int64(l.HZ)
	t := &DirtyThrottle{hz: hz, tickNS: 1e9 / float64(hz), strict: l.StrictLimit,
		poll: 128 << 10 >> pageShift, minWB: 4 << 20 >> pageShift, initBW: 100 << 20 >> pageShift,
		maxPause: max(hz/5, 1)}
	// domain_dirty_limits: the ratios in parts of a page, for precision.
	page := int64(l.PageSize)
	t.thresh = int64(l.Ratio) * page / 100 * l.Dirtyable / page
	t.bgThresh = int64(l.BackgroundRatio) * page / 100 * l.Dirtyable / page
	if t.bgThresh >= t.thresh {
		t.bgThresh = t.thresh / 2
	}
	if t.thresh == 0 {
		return bad("a dirty threshold of 0 pages (%d dirtyable at %d %%)", l.Dirtyable, l.Ratio)
	}
	maxRatio := int64(100 * bdiRatioScale)
	if l.MaxBytes != 0 {
		pages := l.MaxBytes >> pageShift
		// bdi_check_pages_limit's EINVAL, then __bdi_set_max_ratio's (a
		// ratio above 100 %, which the first implies with the default
		// ratios, since the threshold is below the dirtyable memory).
		if pages > l.Dirtyable {
			return bad("max_bytes %d is more than the %d dirtyable pages", l.MaxBytes, l.Dirtyable)
		}
		if maxRatio = pages * 100 * bdiRatioScale / t.thresh; maxRatio > 100*bdiRatioScale {
			return bad("max_bytes %d is more than the dirty threshold of %d pages", l.MaxBytes, t.thresh)
		}
	}
	t.setShares(maxRatio)
	t.ratelimitPages = max(t.thresh/(int64(l.CPUs)*32), 16)
	t.statErr = int64(l.CPUs) * 8 * int64(bits.Len(uint(l.CPUs))) // WB_STAT_BATCH per CPU
	t.dirtyRatelimit, t.balancedRatelimit = t.initBW, t.initBW
	t.writeBW, t.avgWriteBW = t.initBW, t.initBW
	t.bwStamp = jiffyBase // bdi_init at time 0
	return t, nil
}

// setShares sets the device's shares of the domain's thresholds for its
// max_ratio in parts of 100×bdiRatioScale: __wb_calc_thresh with the whole
// share, capped by max_ratio, and wb_dirty_limits' background share. The
// kernel keeps max_bytes as that ratio of the dirty threshold at the moment
// it is written (bdi_ratio_from_pages); the model takes the threshold it
// runs with, so its share is the kernel's only while the machine's
// dirtyable memory stays what it was then.
func (t *DirtyThrottle) setShares(maxRatio int64) {
	t.wbThresh = min(t.thresh, t.thresh*maxRatio/(100*bdiRatioScale))
	t.wbBgThresh = t.wbThresh * t.bgThresh / t.thresh
}

// Thresholds returns the dirty threshold and background threshold of the
// machine and the device's shares of them, in pages (what
// /proc/vmstat's nr_dirty_threshold and nr_dirty_background_threshold, and
// the writeback tracepoints' wb_thresh, show).
func (t *DirtyThrottle) Thresholds() (thresh, bgThresh, wbThresh, wbBgThresh int64) {
	return t.thresh, t.bgThresh, t.wbThresh, t.wbBgThresh
}

// DirtyState is what the clock knows of the device at a moment, in pages:
// Dirty is NR_FILE_DIRTY (dirty, not yet under writeback), Writeback
// NR_WRITEBACK (writeback started, not completed), Dirtied all the pages
// ever made dirty (WB_DIRTIED) and Written all whose writeback has completed
// (WB_WRITTEN).
type DirtyState struct {
	Dirty, Writeback, Dirtied, Written int64
}

// Dirtied accounts n pages task has just dirtied
// (balance_dirty_pages_ratelimited after folio_account_dirtied) and
// reports whether balance_dirty_pages must run now, and the pages it
// weighs (its pages_dirtied: all the task has dirtied since it last
// paused): it runs once the task has dirtied its nr_dirtied_pause pages (8
// pages while the device is over its limit), or its CPU ratelimit_pages
// since it last ran. O(1).
func (t *DirtyThrottle) Dirtied(task *DirtyTask, n int64) (pages int64, run bool) {
	task.nrDirtied += n
	task.cpuDirtied += n
	ratelimit := task.nrDirtiedPause
	if t.dirtyExceeded {
		ratelimit = min(ratelimit, t.poll/4) // 32 KiB of pages
	}
	switch {
	case task.nrDirtied >= ratelimit:
		task.cpuDirtied = 0
	case task.cpuDirtied >= t.ratelimitPages:
		task.cpuDirtied, ratelimit = 0, 0
	}
	return task.nrDirtied, task.nrDirtied >= ratelimit
}

// Balance is one pass of balance_dirty_pages for task at simulated time
// nowNS with the device's counts s, for pagesDirtied, the pages Dirtied
// returned: a task that looks again after a sleep at the limit weighs the
// same pages again, as the kernel's loop keeps its pages_dirtied. It returns how long the task sleeps (0: it goes on), whether the
// flusher must start background writeback (wb_start_background_writeback:
// the caller ignores it when the flusher is already at work), and whether
// the task looks again after its sleep (it was at the limit: the caller
// lets the sleep pass, with the writeback it brings, and calls Balance
// again). O(1).
func (t *DirtyThrottle) Balance(task *DirtyTask, pagesDirtied int64, nowNS float64, s DirtyState) (pauseNS float64, wake, again bool) {
	now := t.jiffies(nowNS)
	gDirty := s.Dirty + s.Writeback
	wbDirty := gDirty // one device: its counts are the machine's
	dirty, thresh, bg := gDirty, t.thresh, t.bgThresh
	if t.strict {
		dirty, thresh, bg = wbDirty, t.wbThresh, t.wbBgThresh
	}
	wake = s.Dirty > t.bgThresh
	if dirty <= (thresh+bg)/2 { // free running
		task.pausedWhen, task.nrDirtied = now, 0
		task.nrDirtiedPause = pollInterval(dirty, thresh)
		return 0, wake, false
	}
	wake = true
	t.dirtyExceeded = wbDirty > t.wbThresh && (gDirty > t.thresh || t.strict)
	posRatio := t.positionRatio(gDirty, wbDirty)
	if now > t.bwStamp+t.bwInterval() {
		t.updateBandwidth(now, s, gDirty, wbDirty, posRatio, true)
	}
	taskRatelimit := t.dirtyRatelimit * posRatio >> ratelimitShift
	maxPause := t.maxPauseFor(wbDirty)
	minPause, nextPause := t.minPause(maxPause, taskRatelimit)
	var period, pause int64
	if taskRatelimit == 0 {
		period, pause = maxPause, maxPause
	} else {
		period = t.hz * pagesDirtied / taskRatelimit
		pause = period
		if task.pausedWhen != 0 {
			pause -= now - task.pausedWhen
		}
		if pause < minPause { // think time made up for the pause
			switch {
			case pause < -t.hz:
				task.pausedWhen, task.nrDirtied = now, 0
			case period != 0:
				task.pausedWhen += period
				task.nrDirtied = 0
			case task.nrDirtiedPause <= pagesDirtied:
				task.nrDirtiedPause += pagesDirtied
			}
			return 0, wake, false
		}
		if pause > maxPause {
			now += min(pause-maxPause, maxPause)
			pause = maxPause
		}
	}
	task.pausedWhen = now + pause
	task.nrDirtied = 0
	task.nrDirtiedPause = nextPause
	again = taskRatelimit == 0 && wbDirty > t.statErr
	// The sleep ends on the tick after its expiry.
	end := float64(t.jiffies(nowNS)-jiffyBase+pause+1) * t.tickNS
	return end - nowNS, wake, again
}

// OverBackground reports whether background writeback goes on at s
// (wb_over_bg_thresh): the machine's dirty pages, not those under
// writeback, above the background threshold, or the device's above its
// share of it. O(1).
func (t *DirtyThrottle) OverBackground(s DirtyState) bool {
	return s.Dirty > t.bgThresh || s.Dirty > t.wbBgThresh
}

// ChunkPages is how many pages background writeback writes of the device
// before it looks at the thresholds again (writeback_chunk_size): half a
// second of the estimated write bandwidth, at most an eighth of the dirty
// limit, rounded down to whole 4 MiB after 4 MiB is added. O(1).
func (t *DirtyThrottle) ChunkPages() int64 {
	pages := min(t.avgWriteBW/2, t.thresh/8)
	return (pages + t.minWB) / t.minWB * t.minWB
}

// WritebackStarts models wb_bandwidth_estimate_start as the flusher starts
// a run at nowNS with nothing of the device under writeback: after a second
// or more without an estimate, the estimate restarts from now (the idle
// time would otherwise count as time that wrote nothing). O(1).
func (t *DirtyThrottle) WritebackStarts(nowNS float64, s DirtyState) {
	now := t.jiffies(nowNS)
	if now-t.bwStamp > t.hz && s.Writeback == 0 {
		t.dirtiedStamp, t.writtenStamp, t.bwStamp = s.Dirtied, s.Written, now
	}
}

// WritebackProgress models wb_update_bandwidth as writeback goes on
// (called as writeback completes): the write bandwidth estimate, without
// the rate limit's, at most once per 200 ms. O(1).
func (t *DirtyThrottle) WritebackProgress(nowNS float64, s DirtyState) {
	if now := t.jiffies(nowNS); now >= t.bwStamp+t.bwInterval() {
		t.updateBandwidth(now, s, 0, 0, 0, false)
	}
}

// Estimates returns the device's rate estimates in pages a second: the
// write bandwidth (avg_write_bandwidth) and the dirty rate limit
// (dirty_ratelimit), as the bdi_dirty_ratelimit tracepoint shows them in
// KiB. O(1).
func (t *DirtyThrottle) Estimates() (writeBW, dirtyRatelimit int64) {
	return t.avgWriteBW, t.dirtyRatelimit
}

// ratelimitShift is RATELIMIT_CALC_SHIFT: ratios are in 1024ths.
const ratelimitShift = 10

// jiffyBase is the jiffy count at simulated time 0: not 0, which
// dirty_paused_when takes to mean "never paused".
const jiffyBase = 1 << 20

// jiffies is the jiffy count at simulated time ns.
func (t *DirtyThrottle) jiffies(ns float64) int64 { return jiffyBase + int64(ns/t.tickNS) }

// bwInterval is BANDWIDTH_INTERVAL (200 ms); bwPeriod the write bandwidth
// estimate's averaging period, 3 s rounded up to a power of two of jiffies.
func (t *DirtyThrottle) bwInterval() int64 { return max(t.hz/5, 1) }
func (t *DirtyThrottle) bwPeriod() int64   { return int64(roundUpPow2(uint64(3 * t.hz))) }

// roundUpPow2 is roundup_pow_of_two (x >= 1).
func roundUpPow2(x uint64) uint64 { return 1 << bits.Len64(x-1) }

// ilog2 is ilog2 (x >= 1; 0 for 0, as the callers' values never are).
func ilog2(x int64) int64 {
	if x <= 0 {
		return 0
	}
	return int64(bits.Len64(uint64(x)) - 1)
}

// pollInterval is dirty_poll_interval: how many pages a free-running task
// dirties before it looks again, about the square root of its distance
// from the threshold.
func pollInterval(dirty, thresh int64) int64 {
	if thresh > dirty {
		return 1 << (ilog2(thresh-dirty) >> 1)
	}
	return 1
}

// posRatioPolynom is pos_ratio_polynom: 1 + ((setpoint − dirty) /
// (limit − setpoint))³ in 1024ths, within [0, 2].
func posRatioPolynom(setpoint, dirty, limit int64) int64 {
	x := (setpoint - dirty) << ratelimitShift / ((limit - setpoint) | 1)
	r := x * x >> ratelimitShift * x >> ratelimitShift
	return min(max(r+1<<ratelimitShift, 0), 2<<ratelimitShift)
}

// positionRatio is wb_position_ratio for the machine's dirty pages gDirty
// and the device's wbDirty (in 1024ths).
func (t *DirtyThrottle) positionRatio(gDirty, wbDirty int64) int64 {
	limit := t.thresh // hard_dirty_limit: the domain's limit is the threshold
	if gDirty >= limit {
		return 0
	}
	freerun := (t.thresh + t.bgThresh) / 2
	setpoint := (freerun + limit) / 2
	pos := posRatioPolynom(setpoint, gDirty, limit)
	if t.strict {
		if wbDirty >= t.wbThresh {
			return 0
		}
		wbSetpoint := (t.wbThresh + t.wbBgThresh) / 2
		if wbSetpoint == 0 || wbSetpoint == t.wbThresh {
			return 0
		}
		return min(pos, posRatioPolynom(wbSetpoint, wbDirty, t.wbThresh))
	}
	// The device's control line: linear, 1 at its setpoint, falling to 0
	// over 8 seconds of its write bandwidth; never below 1/4.
	wbThresh := min(t.wbThresh, t.thresh)
	x := wbThresh << 16 / (t.thresh | 1)
	wbSetpoint := setpoint * x >> 16
	span := (t.thresh - wbThresh + 8*t.avgWriteBW) * x >> 16
	intercept := wbSetpoint + span
	if wbDirty < intercept-span/4 {
		pos = pos * (intercept - wbDirty) / ((intercept - wbSetpoint) | 1)
	} else {
		pos /= 4
	}
	// The reserve area: a device with few dirty pages is not starved.
	if reserve := wbThresh / 2; wbDirty < reserve {
		if wbDirty > reserve/8 {
			pos = pos * reserve / wbDirty
		} else {
			pos *= 8
		}
	}
	return pos
}

// updateBandwidth is __wb_update_bandwidth at jiffy now: with ratelimit,
// the dirty rate limit's step (wb_update_dirty_ratelimit, for the counts'
// position posRatio), then the write bandwidth's, and the stamps.
func (t *DirtyThrottle) updateBandwidth(now int64, s DirtyState, gDirty, wbDirty, posRatio int64, ratelimit bool) {
	elapsed := max(now-t.bwStamp, 1)
	if ratelimit {
		t.updateRatelimit(s.Dirtied, elapsed, gDirty, wbDirty, posRatio)
	}
	t.updateWriteBW(elapsed, s.Written)
	t.dirtiedStamp, t.writtenStamp, t.bwStamp = s.Dirtied, s.Written, now
}

// updateRatelimit is wb_update_dirty_ratelimit: the balanced rate — the
// rate that would have matched the write bandwidth over the last interval —
// and a step of dirty_ratelimit towards it, taken only when the position
// error points the same way, and small near the target.
func (t *DirtyThrottle) updateRatelimit(dirtied, elapsed, gDirty, wbDirty, posRatio int64) {
	freerun := (t.thresh + t.bgThresh) / 2
	dirty, setpoint := gDirty, (freerun+t.thresh)/2
	rate := t.dirtyRatelimit
	dirtyRate := (dirtied - t.dirtiedStamp) * t.hz / elapsed
	task := rate*posRatio>>ratelimitShift + 1
	balanced := min(task*t.avgWriteBW/(dirtyRate|1), t.avgWriteBW)
	if t.strict {
		dirty, setpoint = wbDirty, (t.wbThresh+t.wbBgThresh)/2
	}
	var step int64
	if dirty < setpoint {
		if x := min(t.balancedRatelimit, balanced, task); rate < x {
			step = x - rate
		}
	} else if x := max(t.balancedRatelimit, balanced, task); rate > x {
		step = rate - x
	}
	if shift := rate / (2*step + 1); shift < 64 {
		step = (step>>shift + 7) / 8
	} else {
		step = 0
	}
	if rate < balanced {
		rate += step
	} else {
		rate -= step
	}
	t.dirtyRatelimit, t.balancedRatelimit = max(rate, 1), balanced
}

// updateWriteBW is wb_update_write_bandwidth: the pages written over the
// elapsed jiffies, averaged over the period, and a second, slower average
// that only moves towards the first when it is not about to turn back.
func (t *DirtyThrottle) updateWriteBW(elapsed, written int64) {
	period := t.bwPeriod()
	avg, old := t.avgWriteBW, t.writeBW
	bw := (written - min(written, t.writtenStamp)) * t.hz
	if elapsed > period {
		bw /= elapsed
		avg = bw
	} else {
		bw = (bw + old*(period-elapsed)) >> ilog2(period)
		if avg > old && old >= bw {
			avg -= (avg - old) >> 3
		}
		if avg < old && old <= bw {
			avg += (old - avg) >> 3
		}
	}
	t.writeBW, t.avgWriteBW = bw, max(avg, 1)
}

// maxPauseFor is wb_max_pause: a sleep short enough that the device's
// dirty pages do not run out while the writer sleeps (at most MAX_PAUSE).
func (t *DirtyThrottle) maxPauseFor(wbDirty int64) int64 {
	p := wbDirty/(1+t.avgWriteBW/int64(roundUpPow2(uint64(1+t.hz/8)))) + 1
	return min(p, t.maxPause)
}

// minPause is wb_min_pause: the shortest pause worth sleeping (half the
// target of about 10 ms), and the pages the task dirties before its next
// pass (nr_dirtied_pause), from the stable dirty_ratelimit.
func (t *DirtyThrottle) minPause(maxPause, taskRatelimit int64) (minPause, pages int64) {
	hi, lo := ilog2(t.avgWriteBW), ilog2(t.dirtyRatelimit)
	target := max(int64(1), t.hz/100)
	if hi > lo {
		target += (hi - lo) * (10 * t.hz) / 1024
	}
	target = min(target, 1+maxPause/2)
	hzPow := int64(roundUpPow2(uint64(t.hz)))
	pages = t.dirtyRatelimit * target / hzPow
	if pages < t.poll {
		target = maxPause
		if pages = t.dirtyRatelimit * target / hzPow; pages > t.poll {
			pages = t.poll
			target = t.hz * t.poll / t.dirtyRatelimit
		}
	}
	if t.hz*pages/(taskRatelimit+1) > maxPause {
		target = maxPause
		pages = taskRatelimit * target / hzPow
	}
	if pages >= t.poll {
		return 1 + target/2, pages
	}
	return target, pages
}
