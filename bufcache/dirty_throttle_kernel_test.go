package bufcache

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kernelBDPRow is one row of testdata/balance-dirty-pages-6.18.txt (its
// header says how it was recorded): a writer's look (balance_dirty_pages)
// or a rate-limit update (bdi_dirty_ratelimit), in pages and KB/s.
type kernelBDPRow struct {
	line            int
	update          bool
	thresh, bg      int64 // the domain's thresholds, pages
	dirty, wbDirty  int64 // the machine's and the device's dirty pages
	awriteBW        int64 // update: avg_write_bandwidth, KB/s
	dirtyRate       int64 // update: the dirty rate, KB/s
	task            int64 // task_ratelimit, KB/s
	balanced, rate  int64 // balanced_dirty_ratelimit (update), dirty_ratelimit
	lookRateBefore  int64 // look: the dirty_ratelimit it used, KB/s
	updateTaskInput int64 // update: the task_ratelimit it printed, KB/s
}

func readKernelBDP(t *testing.T) []kernelBDPRow {
	f, err := os.Open("testdata/balance-dirty-pages-6.18.txt")
	require.NoError(t, err)
	defer f.Close()
	var rows []kernelBDPRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		v := make([]int64, len(fields)-1)
		for i, s := range fields[1:] {
			v[i], err = strconv.ParseInt(s, 10, 64)
			require.NoError(t, err, "line %d", n)
		}
		r := kernelBDPRow{line: n}
		switch fields[0] {
		case "look":
			require.Len(t, v, 6, "line %d", n)
			r.thresh, r.bg, r.dirty, r.wbDirty, r.lookRateBefore, r.task = v[0], v[1], v[2], v[3], v[4], v[5]
		case "update":
			require.Len(t, v, 9, "line %d", n)
			r.update = true
			r.thresh, r.bg, r.dirty, r.wbDirty = v[0], v[1], v[2], v[3]
			r.awriteBW, r.dirtyRate, r.updateTaskInput, r.balanced, r.rate = v[4], v[5], v[6], v[7], v[8]
		default:
			require.Failf(t, "bad row", "line %d: %q", n, fields[0])
		}
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

// TestDirtyThrottleAgainstKernel replays what Linux 6.18 traced of one
// writer under a strict 4 MiB bdi limit on a new bdi, and asks the model
// the same questions with the kernel's inputs: at every look, the task's
// rate limit from the device's dirty pages (wb_position_ratio's control
// line: the setpoint between the device's background share and its
// share, the cubic, the kernel's integer rounding); at every update of
// the rate limit, the balanced rate and the step towards it
// (wb_update_dirty_ratelimit), chained from the model's own previous
// answer, starting from a new bdi's INIT_BW. The kernel kept max_bytes
// as a max_ratio of 846 millionths of the threshold it had when the
// limit was written, so the device's shares follow the traced threshold
// by that ratio (the model's runs take the threshold they run with).
func TestDirtyThrottleAgainstKernel(t *testing.T) {
	rows := readKernelBDP(t)
	require.NotEmpty(t, rows)
	d, err := NewDirtyThrottle(DirtyLimits{Dirtyable: 6 << 20, MaxBytes: 4 << 20, StrictLimit: true})
	require.NoError(t, err)
	const maxRatio = 846 // max_ratio_fine, read back after writing max_bytes
	const kb = 4         // KBps(): pages a second to KB/s
	looks, updates, failed := 0, 0, 0
	for _, r := range rows {
		d.thresh, d.bgThresh = r.thresh, r.bg
		d.setShares(maxRatio)
		pos := d.positionRatio(r.dirty, r.wbDirty)
		ok := true
		if !r.update {
			looks++
			rate := r.lookRateBefore / kb
			ok = assert.Equal(t, r.task, kb*(rate*pos>>ratelimitShift), "line %d: task_ratelimit of a look at %d pages", r.line, r.wbDirty)
		} else {
			updates++
			before := d.dirtyRatelimit
			d.avgWriteBW = r.awriteBW / kb
			// The dirty rate over one second's worth of jiffies.
			d.dirtiedStamp = 0
			d.updateRatelimit(r.dirtyRate/kb, d.hz, r.dirty, r.wbDirty, pos)
			ok = assert.Equal(t, r.updateTaskInput, kb*(before*pos>>ratelimitShift+1), "line %d: the update's task_ratelimit", r.line) &&
				assert.Equal(t, r.balanced, kb*d.balancedRatelimit, "line %d: balanced_dirty_ratelimit", r.line) &&
				assert.Equal(t, r.rate, kb*d.dirtyRatelimit, "line %d: dirty_ratelimit", r.line)
		}
		if !ok {
			if failed++; failed == 5 {
				t.Fatal("five rows differ; stopping")
			}
		}
	}
	require.Positive(t, looks)
	require.Positive(t, updates)
	t.Logf("%d looks and %d updates replayed", looks, updates)
}
