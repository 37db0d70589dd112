//go:build linux

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

// TestThrottleRuleLines: a rule prints as the throttle files take it, and
// a file's text parses back into its rules; malformed lines are refused.
func TestThrottleRuleLines(t *testing.T) {
	assert.Equal(t, "7:8 20971520", throttleRule{7, 8, 20 << 20}.String())
	assert.Equal(t, "7:8 0", throttleRule{7, 8, 0}.String(), "removes the device's rule")
	for _, tt := range []struct {
		name, text string
		want       []throttleRule
		bad        bool
	}{
		{"empty", "", nil, false},
		{"one", "7:8 20971520\n", []throttleRule{{7, 8, 20 << 20}}, false},
		{"several", "253:0 1000\n7:12 200\n\n", []throttleRule{{253, 0, 1000}, {7, 12, 200}}, false},
		{"no value", "7:8\n", nil, true},
		{"no minor", "7 100\n", nil, true},
		{"words", "7:8 fast\n", nil, true},
		{"negative", "7:8 -1\n", nil, true},
		{"extra", "7:8 1 2\n", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseThrottleRules(tt.text)
			if tt.bad {
				assert.ErrorContains(t, err, "want MAJ:MIN VALUE")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, r := range []throttleRule{{7, 8, 1}, {259, 1048575, 1 << 40}} {
		back, err := parseThrottleRules(r.String())
		require.NoError(t, err)
		assert.Equal(t, []throttleRule{r}, back, "round trip")
	}
}

// TestActiveScheduler reads the bracketed scheduler of a queue's file.
func TestActiveScheduler(t *testing.T) {
	assert.Equal(t, "none", activeScheduler("[none] mq-deadline kyber bfq"))
	assert.Equal(t, "mq-deadline", activeScheduler("none [mq-deadline] kyber bfq"))
	assert.Equal(t, "none", activeScheduler("none"))
}

// needThrottle skips unless the host runner can apply throttle rules.
func needThrottle(t *testing.T) {
	t.Helper()
	needKernel(t)
	if err := CheckThrottle(); err != nil {
		t.Skipf("the host cannot apply throttle rules: %v", err)
	}
}

// runDevice is a pass's loop device as a test sees it mid-run.
type runDevice struct {
	loop         int
	major, minor uint32
}

// currentDevice finds the loop device of this process's running pass.
func currentDevice() (runDevice, error) {
	loops, _, _, err := leftovers(os.Getpid(), "")
	if err != nil {
		return runDevice{}, err
	}
	if len(loops) != 1 {
		return runDevice{}, fmt.Errorf("want one loop device of this process, have %v", loops)
	}
	major, minor, err := loopDevNum(loops[0])
	return runDevice{loops[0], major, minor}, err
}

// deviceState is what a pass's device has of the rules: its blkio rules,
// scheduler, wbt latency and bdi limits.
func (d runDevice) state() (map[string]string, error) {
	rules, err := throttleRulesOf(d.major, d.minor)
	if err != nil {
		return nil, err
	}
	st := map[string]string{"throttle": strings.Join(rules, "; ")}
	for k, p := range map[string]string{
		"scheduler":    fmt.Sprintf("/sys/block/loop%d/queue/scheduler", d.loop),
		"wbt":          fmt.Sprintf("/sys/block/loop%d/queue/wbt_lat_usec", d.loop),
		"max_bytes":    fmt.Sprintf("/sys/class/bdi/%d:%d/max_bytes", d.major, d.minor),
		"strict_limit": fmt.Sprintf("/sys/class/bdi/%d:%d/strict_limit", d.major, d.minor),
	} {
		if st[k], err = readSys(p); err != nil {
			return nil, err
		}
	}
	st["scheduler"] = activeScheduler(st["scheduler"])
	return st, nil
}

// assertDevicesGone checks that no device a run used is left: no blkio
// rule names it, and no loop device is bound to the process's files.
func assertDevicesGone(t *testing.T, devs []runDevice) {
	t.Helper()
	for _, d := range devs {
		rules, err := throttleRulesOf(d.major, d.minor)
		require.NoError(t, err)
		assert.Empty(t, rules, "blkio rules left on %d:%d", d.major, d.minor)
		b, err := os.ReadFile(fmt.Sprintf("/sys/block/loop%d/loop/backing_file", d.loop))
		if err == nil {
			assert.NotContains(t, string(b), fmt.Sprintf("%s%d-", namePrefix, os.Getpid()), "loop%d still bound to the run's file", d.loop)
		}
	}
	assertNoLeftovers(t, os.Getpid())
}

const ruled = `# every rule, on a small write and read
device size=16M sector=512 rbps=64M wbps=64M riops=5000 wiops=5000 sched=mq-deadline wbt=off max_bytes=8M strict_limit=1
open a rdwr
pwrite a off=0 len=4K repeat=4 fill=0x5a
fsync a
pread a off=0 len=4K
close a
`

// TestRulesApplied: each pass's device has every rule from its first
// operation on, the result's queue shows the scheduler, and afterwards no
// rule, limit or device is left.
func TestRulesApplied(t *testing.T) {
	needThrottle(t)
	s, err := scenario.Parse("ruled.scn", ruled)
	require.NoError(t, err)
	var devs []runDevice
	var states []map[string]string
	r, err := Run(context.Background(), s, Options{BeforeOp: func(k int) error {
		if k != 1 {
			return nil
		}
		d, err := currentDevice()
		if err != nil {
			return err
		}
		st, err := d.state()
		devs, states = append(devs, d), append(states, st)
		return err
	}})
	require.NoError(t, err)
	require.Len(t, states, 2, "the counting pass and the timing pass")
	for i, st := range states {
		d := devs[i]
		var want []string
		for j, v := range []int64{64 << 20, 64 << 20, 5000, 5000} {
			want = append(want, throttleFiles[j]+" "+throttleRule{d.major, d.minor, v}.String())
		}
		assert.Equal(t, strings.Join(want, "; "), st["throttle"], "pass %d", i+1)
		assert.Equal(t, "mq-deadline", st["scheduler"], "pass %d", i+1)
		assert.Equal(t, "0", st["wbt"], "pass %d: wbt=off", i+1)
		assert.Equal(t, "1", st["strict_limit"], "pass %d", i+1)
		assert.InEpsilon(t, 8<<20, atoi(t, st["max_bytes"]), 0.01, "pass %d: the kernel keeps a ratio", i+1)
	}
	require.NotNil(t, r.Queue)
	assert.Equal(t, "mq-deadline", r.Queue.Scheduler)
	assert.Equal(t, "0x5a*4096", r.Ops[3].Data)
	assertDevicesGone(t, devs)
}

func atoi(t *testing.T, s string) float64 {
	t.Helper()
	var n float64
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err, "%q", s)
	return n
}

// TestRulesPace: a bps rule paces a dd-like write's fsync, and an iops rule
// each of its bios, to the rule's time within 10 %, in the untraced pass.
func TestRulesPace(t *testing.T) {
	needThrottle(t)
	for _, tt := range []struct {
		name, rule string
		pages      int // 4 KiB pwrites, one bio each at block size 4096
		// want is the rule's time of the fsync's writeback.
		want time.Duration
	}{
		// 8 MiB at 16 MiB/s. (At 20 MiB/s, Linux 6.18 on a HZ=250 host
		// writes 16 MiB in 0.70 s, not 0.8: blk-throttle's own rounding.)
		{"wbps", "wbps=16M", 2048, 500 * time.Millisecond},
		// 64 bios at 200 per second.
		{"wiops", "wiops=200", 64, 320 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := fmt.Sprintf("device size=16M sector=512 %s\nopen a rdwr\nblkbszset a 4096\npwrite a off=0 len=4K repeat=%d\nfsync a\nclose a\n", tt.rule, tt.pages)
			s, err := scenario.Parse(tt.name+".scn", text)
			require.NoError(t, err)
			r, err := Run(context.Background(), s, Options{})
			require.NoError(t, err)
			assert.Equal(t, uint64(tt.pages), r.Ops[3].Counters.Value("bio.write"), "one bio per block")
			fsync := r.Ops[3]
			require.NotNil(t, fsync.Wall)
			got := time.Duration(fsync.Wall.MinNs)
			assert.InEpsilon(t, tt.want.Seconds(), got.Seconds(), 0.10, "fsync took %v, the rule's time is %v", got, tt.want)
			pwrite := time.Duration(r.Ops[2].Wall.MinNs)
			assert.Less(t, pwrite, tt.want/4, "the buffered writes are not paced: writeback is the fsync's")
			require.NotNil(t, r.Wall)
			assert.GreaterOrEqual(t, r.Wall.MinNs, fsync.Wall.MinNs+r.Ops[2].Wall.MinNs)
			assertNoLeftovers(t, os.Getpid())
		})
	}
}

// TestRulesCleanupAfterInjectedFailure fails, then panics, in each pass of
// a throttled run, with dirty pages cached and the rules set: no rule,
// limit or device is left either way.
func TestRulesCleanupAfterInjectedFailure(t *testing.T) {
	needThrottle(t)
	s, err := scenario.Parse("ruled.scn", ruled)
	require.NoError(t, err)
	errInjected := errors.New("injected")
	for _, tt := range []struct {
		name  string
		pass  int // which pass's op 3 fails
		panic bool
	}{
		{"error, counting pass", 1, false},
		{"error, timing pass", 2, false},
		{"panic, counting pass", 1, true},
		{"panic, timing pass", 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var devs []runDevice
			passes := 0
			before := func(k int) error {
				if k == 1 {
					passes++
					d, err := currentDevice()
					if err != nil {
						return err
					}
					devs = append(devs, d)
				}
				if k == 3 && passes == tt.pass {
					if tt.panic {
						panic("injected panic")
					}
					return errInjected
				}
				return nil
			}
			func() {
				defer func() {
					if tt.panic {
						assert.Equal(t, "injected panic", recover())
					}
				}()
				_, err = Run(context.Background(), s, Options{BeforeOp: before})
				require.ErrorIs(t, err, errInjected)
				assert.Contains(t, err.Error(), "op 3 (fsync a)")
			}()
			require.Len(t, devs, tt.pass)
			assertDevicesGone(t, devs)
		})
	}
}

// TestNoTiming: without the timing pass the result has no wall time and
// keeps the counting pass's CPU time.
func TestNoTiming(t *testing.T) {
	needKernel(t)
	s, err := scenario.Parse("smoke.scn", smoke)
	require.NoError(t, err)
	passes := 0
	r, err := Run(context.Background(), s, Options{NoTiming: true, BeforeOp: func(k int) error {
		if k == 1 {
			passes++
		}
		return nil
	}})
	require.NoError(t, err)
	assert.Equal(t, 1, passes)
	assert.Nil(t, r.Wall)
	for _, o := range r.Ops {
		assert.Nil(t, o.Wall, o.Op)
		assert.NotNil(t, o.CPU, o.Op)
	}
	assertNoLeftovers(t, os.Getpid())
}
