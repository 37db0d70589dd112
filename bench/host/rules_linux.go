//go:build linux

package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// blkioDir is where cgroup v1's blkio controller is mounted; the runner's
// blk-throttle rules go in its root group, the one the runner runs in.
const blkioDir = "/sys/fs/cgroup/blkio"

// throttleFiles are the root group's blk-throttle rule files, one per
// direction and unit, in the order Rules lists them.
var throttleFiles = []string{
	"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
	"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
}

// throttleRule is one blk-throttle rule, a line "MAJ:MIN VALUE" of a
// throttle file: the device's limit in bytes or bios per second. Writing
// the line with value 0 removes the device's rule.
type throttleRule struct {
	major, minor uint32
	value        int64
}

// String is the rule as the throttle files take and show it.
func (r throttleRule) String() string { return fmt.Sprintf("%d:%d %d", r.major, r.minor, r.value) }

// parseThrottleRules reads a throttle file's text: one rule a line.
func parseThrottleRules(text string) ([]throttleRule, error) {
	var out []throttleRule
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := fmt.Errorf("blk-throttle rule %q: want MAJ:MIN VALUE", line)
		if len(f) != 2 {
			return nil, bad
		}
		maj, mi, ok := strings.Cut(f[0], ":")
		major, err1 := strconv.ParseUint(maj, 10, 32)
		minor, err2 := strconv.ParseUint(mi, 10, 32)
		value, err3 := strconv.ParseInt(f[1], 10, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || value < 0 {
			return nil, bad
		}
		out = append(out, throttleRule{uint32(major), uint32(minor), value})
	}
	return out, nil
}

// throttleValues are the rules' four blk-throttle limits, in
// throttleFiles' order.
func throttleValues(r scenario.Rules) []int64 {
	return []int64{r.ReadBPS, r.WriteBPS, r.ReadIOPS, r.WriteIOPS}
}

// throttled reports whether r sets a blk-throttle limit.
func throttled(r scenario.Rules) bool {
	for _, v := range throttleValues(r) {
		if v != 0 {
			return true
		}
	}
	return false
}

// CheckThrottle reports what the host runner lacks to apply a device's
// rbps, wbps, riops and wiops rules, nil when it can: cgroup v1's blkio
// controller mounted at /sys/fs/cgroup/blkio with its throttle files, and
// this process in its root group (a v1 rule binds only the group's own
// tasks, and the runner writes the root group's).
func CheckThrottle() error {
	const need = "host: the device's rbps, wbps, riops and wiops rules need cgroup v1's blkio controller at " + blkioDir
	var st unix.Statfs_t
	if err := unix.Statfs(blkioDir, &st); err != nil {
		return fmt.Errorf("%s: %w", need, err)
	}
	if st.Type != unix.CGROUP_SUPER_MAGIC {
		return fmt.Errorf("%s: it is not a cgroup v1 mount (filesystem type %#x)", need, st.Type)
	}
	for _, f := range throttleFiles {
		if _, err := os.Stat(filepath.Join(blkioDir, f)); err != nil {
			return fmt.Errorf("%s with blk-throttle (CONFIG_BLK_DEV_THROTTLING): %w", need, err)
		}
	}
	group, err := blkioGroup()
	if err != nil {
		return fmt.Errorf("%s: %w", need, err)
	}
	if group != "/" {
		return fmt.Errorf("%s, and this process in its root group, not %s", need, group)
	}
	return nil
}

// blkioGroup is this process's blkio cgroup (v1), from /proc/self/cgroup.
func blkioGroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID:CONTROLLERS:PATH
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",blkio,") {
			return parts[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no blkio line in /proc/self/cgroup")
}

// setting is a value written to a sysfs or cgroup file.
type setting struct{ path, value string }

func (s setting) write() error {
	if err := os.WriteFile(s.path, []byte(s.value), 0); err != nil {
		return fmt.Errorf("host: write %q to %s: %w", s.value, s.path, err)
	}
	return nil
}

// apply writes do and records undo in e.undo at once, so cleanup undoes
// exactly what was applied.
func (e *env) apply(do, undo setting) error {
	if err := do.write(); err != nil {
		return err
	}
	e.undo = append(e.undo, undo)
	return nil
}

// undoRules undoes the applied settings, the last first (the throttle
// rules, written first, go last). Cleanup calls it before it closes the
// scenario's descriptors and detaches the device, so that neither waits
// for I/O a rule holds.
func (e *env) undoRules() error {
	var errs []error
	for len(e.undo) > 0 {
		s := e.undo[len(e.undo)-1]
		errs = append(errs, s.write())
		e.undo = e.undo[:len(e.undo)-1]
	}
	return errors.Join(errs...)
}

// applyRules applies r to the runner's bound loop device, each item
// recorded for cleanup as soon as it is set: the blk-throttle limits as
// rules of the blkio root group on its MAJ:MIN (removed with "MAJ:MIN 0");
// the queue's scheduler, then its wbt_lat_usec (wbt=off as 0, a latency
// in microseconds: a scheduler change resets wbt, so wbt comes after);
// the bdi's max_bytes, then strict_limit. The queue and bdi files get back
// the values found; max_bytes, which the kernel keeps as a ratio of the
// dirty limit and shows rounded, is restored through max_ratio_fine, the
// ratio it found.
func (e *env) applyRules(r scenario.Rules) error {
	for i, v := range throttleValues(r) {
		if v == 0 {
			continue
		}
		path := filepath.Join(blkioDir, throttleFiles[i])
		do := setting{path, throttleRule{e.major, e.minor, v}.String()}
		if err := e.apply(do, setting{path, throttleRule{e.major, e.minor, 0}.String()}); err != nil {
			return err
		}
	}
	if throttled(r) {
		time.Sleep(throttleSettle)
		base, err := e.throttledBytes()
		if err != nil {
			return err
		}
		st, err := readStat(fmt.Sprintf("/sys/block/loop%d", e.loop))
		if err != nil {
			return err
		}
		e.throttled, e.throttleBase, e.statBase = true, base, st
	}
	queue := fmt.Sprintf("/sys/block/loop%d/queue", e.loop)
	if r.Scheduler != "" {
		file := filepath.Join(queue, "scheduler")
		if offered, err := readSys(file); err == nil && !slices.Contains(strings.Fields(strings.NewReplacer("[", "", "]", "").Replace(offered)), r.Scheduler) {
			return fmt.Errorf("host: sched=%s: %w: the loop queue offers %s", r.Scheduler, scenario.ErrRuleUnavailable, strings.TrimSpace(offered))
		}
		if err := e.applyFound(file, r.Scheduler, activeScheduler); err != nil {
			return err
		}
	}
	if r.WBT != scenario.WBTDefault {
		usec := int64(0)
		if r.WBT != scenario.WBTOff {
			usec = r.WBT.Microseconds()
		}
		file := filepath.Join(queue, "wbt_lat_usec")
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("host: wbt: %w: a kernel without CONFIG_BLK_WBT has no %s", scenario.ErrRuleUnavailable, file)
		}
		if err := e.applyFound(file, strconv.FormatInt(usec, 10), nil); err != nil {
			return err
		}
	}
	bdi := fmt.Sprintf("/sys/class/bdi/%d:%d", e.major, e.minor)
	if r.MaxBytes != 0 {
		ratio, err := readSys(filepath.Join(bdi, "max_ratio_fine"))
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("host: max_bytes: %w: the bdi has no max_ratio_fine (before Linux 6.2)", scenario.ErrRuleUnavailable)
		}
		if err != nil {
			return fmt.Errorf("host: max_bytes: %w", err)
		}
		do := setting{filepath.Join(bdi, "max_bytes"), strconv.FormatInt(r.MaxBytes, 10)}
		if err := e.apply(do, setting{filepath.Join(bdi, "max_ratio_fine"), ratio}); err != nil {
			return err
		}
	}
	if r.StrictLimit {
		if err := e.applyFound(filepath.Join(bdi, "strict_limit"), "1", nil); err != nil {
			return err
		}
	}
	return nil
}

// throttleSettle is how long the runner waits after setting blk-throttle
// rules before the first operation. Writing a rule starts a slice
// (tg_conf_updated), and a slice still open when the first bio comes gives
// it a head start: under wbps=20M a 16 MiB fsync took 657-705 ms instead
// of 707-710. The slice's end is rounded up to a whole slice (100 ms,
// DFL_THROTL_SLICE), so after 250 ms it is over and the first bio starts a
// fresh slice, as the model's blk.Throttle assumes.
const throttleSettle = 250 * time.Millisecond

// throttledBytes is what the blkio root group's blk-throttle has seen
// submitted to the device, read and write bytes
// (blkio.throttle.io_service_bytes: counted once a bio, as it enters
// blk-throttle, before any wait).
func (e *env) throttledBytes() (rw [2]uint64, err error) {
	b, err := os.ReadFile(filepath.Join(blkioDir, "blkio.throttle.io_service_bytes"))
	if err != nil {
		return rw, fmt.Errorf("host: %w", err)
	}
	dev := fmt.Sprintf("%d:%d", e.major, e.minor)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != dev {
			continue
		}
		n, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return rw, fmt.Errorf("host: blkio.throttle.io_service_bytes: %q", line)
		}
		switch f[1] {
		case "Read":
			rw[0] = n
		case "Write":
			rw[1] = n
		}
	}
	return rw, nil
}

// heldBytes reports whether blk-throttle may still hold bios of the
// device: the bytes it has seen submitted since the rules were set are not
// all among the sectors the device has completed since then (stat, read
// beside the throttle's count when the rules were set: anything that
// probed the new device before is in neither). Without throttle rules,
// false.
func (e *env) heldBytes(st scenario.DiskStat) (bool, error) {
	if !e.throttled {
		return false, nil
	}
	seen, err := e.throttledBytes()
	if err != nil {
		return false, err
	}
	done := [2]uint64{(st.ReadSectors - e.statBase.ReadSectors) * 512, (st.WriteSectors - e.statBase.WriteSectors) * 512}
	return seen[0]-e.throttleBase[0] > done[0] || seen[1]-e.throttleBase[1] > done[1], nil
}

// applyFound writes value to path, to be restored to the value found
// there (read through found, when not nil, from the file's text).
func (e *env) applyFound(path, value string, found func(string) string) error {
	old, err := readSys(path)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if found != nil {
		old = found(old)
	}
	return e.apply(setting{path, value}, setting{path, old})
}

// activeScheduler is the scheduler a queue's scheduler file marks active:
// "mq-deadline" of "none [mq-deadline] kyber bfq".
func activeScheduler(text string) string {
	if i, j := strings.Index(text, "["), strings.Index(text, "]"); i >= 0 && j > i {
		return text[i+1 : j]
	}
	return text
}

// throttleRulesOf lists the blkio root group's rules on device
// major:minor, as "FILE MAJ:MIN VALUE"; none when blkio v1 is not mounted.
func throttleRulesOf(major, minor uint32) ([]string, error) {
	var out []string
	for _, f := range throttleFiles {
		b, err := os.ReadFile(filepath.Join(blkioDir, f))
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		rules, err := parseThrottleRules(string(b))
		if err != nil {
			return nil, fmt.Errorf("host: %s: %w", f, err)
		}
		for _, r := range rules {
			if r.major == major && r.minor == minor {
				out = append(out, f+" "+r.String())
			}
		}
	}
	return out, nil
}

// clearThrottleRules removes the blkio root group's rules on device
// major:minor and returns what it removed, as throttleRulesOf names them.
func clearThrottleRules(major, minor uint32) ([]string, error) {
	found, err := throttleRulesOf(major, minor)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, f := range throttleFiles {
		for _, rule := range found {
			if strings.HasPrefix(rule, f+" ") {
				if err := (setting{filepath.Join(blkioDir, f), throttleRule{major, minor, 0}.String()}).write(); err != nil {
					errs = append(errs, err)
					continue
				}
				done = append(done, rule)
			}
		}
	}
	return done, errors.Join(errs...)
}

// loopDevNum is loop device n's MAJ:MIN, from /sys/block/loopN/dev.
func loopDevNum(n int) (major, minor uint32, err error) {
	s, err := readSys(fmt.Sprintf("/sys/block/loop%d/dev", n))
	if err != nil {
		return 0, 0, fmt.Errorf("host: %w", err)
	}
	if _, err := fmt.Sscanf(s, "%d:%d", &major, &minor); err != nil {
		return 0, 0, fmt.Errorf("host: /sys/block/loop%d/dev %q: %w", n, s, err)
	}
	return major, minor, nil
}
