package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rules give a scenario's device a known speed and the kernel's throttles:
// `device size=64M sector=512 wbps=20M wiops=500 sched=mq-deadline wbt=off
// max_bytes=8M strict_limit=1`. The zero value sets nothing: the device is
// the runner's own backing device at its own speed, with its queue's
// defaults.
//
// On the host kernel each rule is applied to the runner's private loop
// device only, and removed on every exit path: the throttle limits are
// cgroup blk-throttle rules (cgroup v1 blkio.throttle.*_device, or v2
// io.max), the scheduler and wbt are the queue's sysfs files, and the dirty
// limits are the device's bdi files (/sys/class/bdi/MAJ:MIN/). The model
// applies the same rules in simulated time over its backing device's cost.
type Rules struct {
	// ReadBPS and WriteBPS limit the bytes per second of each direction
	// (blk-throttle's bps); 0 means no limit.
	ReadBPS, WriteBPS int64
	// ReadIOPS and WriteIOPS limit the bios per second of each direction
	// (blk-throttle's iops: every bio submitted counts, splits included);
	// 0 means no limit.
	ReadIOPS, WriteIOPS int64
	// Scheduler is the queue's I/O scheduler: "none", "mq-deadline",
	// "kyber" or "bfq"; "" keeps the queue's default.
	Scheduler string
	// WBT is the queue's write-back throttling target latency
	// (wbt_lat_usec): WBTDefault keeps the queue's, WBTOff disables it, a
	// positive value sets it.
	WBT time.Duration
	// MaxBytes is the device's per-bdi dirty limit in bytes (the bdi's
	// max_bytes); 0 means none.
	MaxBytes int64
	// StrictLimit makes the bdi's dirty limit strict (the bdi's
	// strict_limit): its writers are throttled at its own share even when
	// the system is under its global limits.
	StrictLimit bool
}

// The WBT values that are not a latency.
const (
	WBTDefault time.Duration = 0
	WBTOff     time.Duration = -1
)

// Bounds of the rules, which keep every run short: a rate below MinBPS or
// MinIOPS, or one that would make the scenario's I/O take longer than
// MaxThrottledTime at its slowest, is refused.
const (
	MinBPS           = 64 << 10
	MinIOPS          = 10
	MaxThrottledTime = 5 * time.Minute
	// MaxWBT is the longest wbt target latency accepted (one second).
	MaxWBT = time.Second
)

// Schedulers are the names Rules.Scheduler takes: the schedulers a
// 6.18 multi-queue device offers.
var Schedulers = []string{"none", "mq-deadline", "kyber", "bfq"}

// Any reports whether any rule is set.
func (r Rules) Any() bool { return r != Rules{} }

// ruleKeys are the device line's rule keys in canonical order.
var ruleKeys = []string{"rbps", "wbps", "riops", "wiops", "sched", "wbt", "max_bytes", "strict_limit"}

// String is the rules' part of the device line, each set rule as key=value
// in canonical order, "" when none is set.
func (r Rules) String() string {
	var b []byte
	add := func(k, v string) {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"rbps", r.ReadBPS}, {"wbps", r.WriteBPS}} {
		if f.v != 0 {
			add(f.k, FormatSize(f.v))
		}
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"riops", r.ReadIOPS}, {"wiops", r.WriteIOPS}} {
		if f.v != 0 {
			add(f.k, strconv.FormatInt(f.v, 10))
		}
	}
	if r.Scheduler != "" {
		add("sched", r.Scheduler)
	}
	switch {
	case r.WBT == WBTOff:
		add("wbt", "off")
	case r.WBT > 0:
		add("wbt", strconv.FormatInt(r.WBT.Microseconds(), 10)+"us")
	}
	if r.MaxBytes != 0 {
		add("max_bytes", FormatSize(r.MaxBytes))
	}
	if r.StrictLimit {
		add("strict_limit", "1")
	}
	return string(b)
}

// ErrRuleUnavailable is wrapped by a runner's error for a device rule its
// kernel cannot apply: a scheduler its queue does not offer (a kernel
// built without bfq), a queue without wbt, a bdi without the fine ratios
// max_bytes needs. A caller comparing the runners skips such a scenario,
// saying why, rather than failing or comparing a run without the rule.
var ErrRuleUnavailable = errors.New("the kernel cannot apply the device rule")

// ParseRules reads device rules written as a device line writes them
// ("wbps=8M max_bytes=4M strict_limit=1", docs/scenario-language.md) for a
// device that is no scenario's: a trace's or a generator's. It checks
// what can be checked without the I/O the rules will pace — the rates'
// floors (MinBPS, MinIOPS), the scheduler, the wbt latency — and refuses
// any other key. Errors name the rule. O(len(s)).
func ParseRules(s string) (Rules, error) {
	kv, err := keyValues(strings.Fields(s), ruleKeys...)
	if err != nil {
		return Rules{}, err
	}
	r, err := parseRules(kv)
	if err != nil {
		return Rules{}, err
	}
	if err := r.check(0, 512); err != nil { // no I/O: only the bounds that need none
		return Rules{}, err
	}
	return r, nil
}

// parseRules reads the rule keys of a device line's key=value map.
func parseRules(kv map[string]string) (Rules, error) {
	var r Rules
	var err error
	size := func(k string, dst *int64) {
		if v, ok := kv[k]; ok && err == nil {
			if *dst, err = ParseSize(v); err != nil {
				err = fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	count := func(k string, dst *int64) {
		if v, ok := kv[k]; ok && err == nil {
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil || *dst < 0 {
				err = fmt.Errorf("%s=%s: want a count of bios per second", k, echoToken(v))
			}
		}
	}
	size("rbps", &r.ReadBPS)
	size("wbps", &r.WriteBPS)
	count("riops", &r.ReadIOPS)
	count("wiops", &r.WriteIOPS)
	size("max_bytes", &r.MaxBytes)
	if err != nil {
		return Rules{}, err
	}
	if v, ok := kv["sched"]; ok {
		r.Scheduler = v
	}
	if v, ok := kv["wbt"]; ok {
		if r.WBT, err = parseWBT(v); err != nil {
			return Rules{}, err
		}
	}
	if v, ok := kv["strict_limit"]; ok {
		switch v {
		case "0":
		case "1":
			r.StrictLimit = true
		default:
			return Rules{}, fmt.Errorf("strict_limit=%s: want 0 or 1", echoToken(v))
		}
	}
	return r, nil
}

// parseWBT reads wbt=off or a latency with a unit (2000us, 2ms).
func parseWBT(v string) (time.Duration, error) {
	if v == "off" {
		return WBTOff, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d%time.Microsecond != 0 {
		return 0, fmt.Errorf("wbt=%s: want off or a latency in whole microseconds (2000us, 2ms)", echoToken(v))
	}
	return d, nil
}

// check validates the rules against the bounds, given the scenario's
// total I/O in bytes and its device's logical block size (the smallest
// bio), so that no rule makes a run longer than MaxThrottledTime.
func (r Rules) check(totalIO int64, sector int) error {
	for _, f := range []struct {
		k string
		v int64
	}{{"rbps", r.ReadBPS}, {"wbps", r.WriteBPS}} {
		if f.v != 0 && f.v < MinBPS {
			return fmt.Errorf("%s=%s is below the bound of %s per second", f.k, FormatSize(f.v), FormatSize(MinBPS))
		}
		if f.v != 0 && time.Duration(float64(totalIO)/float64(f.v)*float64(time.Second)) > MaxThrottledTime {
			return fmt.Errorf("%s=%s would take the scenario's %s of I/O past %v", f.k, FormatSize(f.v), FormatSize(totalIO), MaxThrottledTime)
		}
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"riops", r.ReadIOPS}, {"wiops", r.WriteIOPS}} {
		if f.v != 0 && f.v < MinIOPS {
			return fmt.Errorf("%s=%d is below the bound of %d bios per second", f.k, f.v, MinIOPS)
		}
		if bios := totalIO / int64(sector); f.v != 0 && time.Duration(float64(bios)/float64(f.v)*float64(time.Second)) > MaxThrottledTime {
			return fmt.Errorf("%s=%d would take the scenario's %s of I/O in %d-byte bios past %v", f.k, f.v, FormatSize(totalIO), sector, MaxThrottledTime)
		}
	}
	if r.Scheduler != "" && !slices.Contains(Schedulers, r.Scheduler) {
		return fmt.Errorf("sched=%s: want one of none, mq-deadline, kyber, bfq", echoToken(r.Scheduler))
	}
	if r.WBT > MaxWBT || r.WBT < 0 && r.WBT != WBTOff {
		return fmt.Errorf("wbt=%v is not off or a latency of at most %v", r.WBT, MaxWBT)
	}
	if r.MaxBytes < 0 {
		return errors.New("max_bytes must not be negative")
	}
	return nil
}
