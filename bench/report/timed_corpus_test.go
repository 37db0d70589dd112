package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
)

// timedCorpus is the timed corpus: scenarios on devices of known speed,
// recorded on Linux 6.18 with their elapsed times in kernel/6.18 inside it,
// and x86-host.json, the host calibration of the machine that recorded
// them, fitted without them (bhsim calibrate --host).
const timedCorpus = "../../testdata/timed"

// timingCounters are the counters that depend on how far the loop worker
// has got: rq.insert counts requests inserted when a plug's owner sleeps
// in write-back throttling, whose in-flight count the model does not
// follow (docs/known-differences.md, "Throttle rules"). Every other
// counter must agree — the requests, merges and plugs the throttle's
// rounds form included.
var timingCounters = []string{"rq.insert"}

// flusherTimed reports whether row r of a scenario whose device sets bdi
// dirty limits depends on when the flusher's passes run, which the model
// places at the moment a writer wakes the flusher and the kernel a
// kworker's scheduling delay later (docs/known-differences.md, "Writer
// throttling in a scenario or a workload"): per operation, every count of
// its writes — the passes that ran during it, and so which operation
// holds the writeback — and over the scenario the sizes of the requests
// kthrotld's rounds cut and the task's plugs. What was written in all
// (bio.write, sectors.written and the rest of the totals) must agree.
func flusherTimed(r Row) bool {
	name, _, _ := strings.Cut(r.Name, "=")
	if r.Op > 0 {
		switch name {
		case "bio.write", "bio.write.bytes", "merge.back", "sectors.written", "stat.write.ios", "stat.write.merges",
			"stat.write.sectors", "rq.write", "rq.write.bytes", "rq.get", "rq.complete", "plug.plug", "plug.unplug", "plug.unplug.rqs":
			return true
		}
		return false
	}
	switch name {
	case "rq.write.bytes", "plug.plug", "plug.unplug", "plug.unplug.rqs":
		return true
	}
	return false
}

// TestValidateTimedCorpus holds the model's clock to the timed corpus: at
// least 60 timed values, at least 80 % of them inside the kernel's range
// widened by 5 %, and no counter but timingCounters (and, where the device
// sets dirty limits, flusherTimed's) differing — also untimed, where the
// throttle's rounds are placed by the x86 server's prices instead of the
// host profile's.
func TestValidateTimedCorpus(t *testing.T) {
	files, err := ScenarioFiles(timedCorpus)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 30)
	p, err := timing.LoadProfile(filepath.Join(timedCorpus, "x86-host.json"))
	require.NoError(t, err)
	for _, prof := range []*timing.Profile{p, nil} {
		v, err := Validate(context.Background(), files, Recorded(""), ValidateOptions{On: "recorded", Profile: prof})
		require.NoError(t, err)
		s := v.Summary
		t.Logf("profile %v: %d of %d timed values within; %d of %d counter rows equal", prof != nil, s.TimedWithin, s.Timed, s.Equal, s.Total)
		if prof != nil {
			assert.GreaterOrEqual(t, s.Timed, 60)
			assert.GreaterOrEqual(t, float64(s.TimedWithin), 0.8*float64(s.Timed))
		} else {
			assert.Zero(t, s.Timed, "untimed")
		}
		limited := map[string]bool{}
		for _, f := range files {
			rules := f.Scenario.Device.Rules
			limited[f.Scenario.Name] = rules.MaxBytes != 0 || rules.StrictLimit
		}
		for _, c := range v.Scenarios {
			for _, r := range c.Rows {
				if r.Equal {
					continue
				}
				known := limited[c.Scenario] && flusherTimed(r)
				for _, f := range timingCounters {
					known = known || r.Name == f
				}
				assert.True(t, known, "profile %v: %s op %d %s: model %s, kernel %s", prof != nil, c.Scenario, r.Op, r.Name, r.Model, r.Kernel)
			}
		}
	}
}

// TestValidateUsesTheRecordedLoopDisk: each recording is timed over the
// loop disk measured with it (scenario.LoopDiskFile in its directory),
// and the output says which; one without is timed over engine.LoopDisk; a
// disk of another kernel build than its recording is refused. The
// scenario is the timed corpus's 16 KiB-block dd under a write rule, whose
// read-modify-write reads are not throttled: a disk of a fifth the latency
// makes its pwrites faster.
func TestValidateUsesTheRecordedLoopDisk(t *testing.T) {
	const name = "dd-wiops-bs16k"
	// corpus copies the scenario and its recording into a directory of its
	// own and returns the directory and the recording.
	corpus := func() (string, *scenario.Result) {
		dir := t.TempDir()
		rec := filepath.Join(dir, "kernel", "6.18")
		require.NoError(t, os.MkdirAll(rec, 0o755))
		for _, f := range []struct{ from, to string }{
			{filepath.Join(timedCorpus, name+".scn"), filepath.Join(dir, name+".scn")},
			{filepath.Join(timedCorpus, "kernel", "6.18", name+".json"), filepath.Join(rec, name+".json")},
		} {
			b, err := os.ReadFile(f.from)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f.to, b, 0o644))
		}
		r, err := scenario.ReadResultFile(filepath.Join(rec, name+".json"))
		require.NoError(t, err)
		return dir, r
	}
	p, err := timing.LoadProfile(filepath.Join(timedCorpus, "x86-host.json"))
	require.NoError(t, err)
	plain, _ := corpus()
	fast, r := corpus()

	d := engine.LoopDisk()
	small := d.LatencyNS/5 + scenario.LoopDiskSmall*1e3/d.MBps
	large := d.LatencyNS/5 + scenario.LoopDiskLarge*1e3/d.MBps
	l := &scenario.LoopDisk{Schema: scenario.LoopDiskSchema, Kernel: r.Kernel, Machine: r.Machine, Runs: 9,
		Read: scenario.LoopDiskTimes{SmallNS: small, LargeNS: large}, Write: scenario.LoopDiskTimes{SmallNS: small, LargeNS: large}}
	writeDisk := func(l *scenario.LoopDisk) {
		b, err := l.Encode()
		require.NoError(t, err)
		f := filepath.Join(fast, "kernel", "6.18", filepath.FromSlash(scenario.LoopDiskFile))
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, b, 0o644))
	}
	writeDisk(l)
	files, err := ScenarioFiles(plain, fast)
	require.NoError(t, err)
	got, err := RecordedLoopDisk("", files[1].Path)
	require.NoError(t, err)
	assert.Equal(t, l, got, "the file beside the recording")
	none, err := RecordedLoopDisk("", files[0].Path)
	require.NoError(t, err)
	assert.Nil(t, none, "no loop-disk file: none")

	v, err := Validate(context.Background(), files, Recorded(""), ValidateOptions{On: "recorded", Profile: p, Disk: RecordedDisk("")})
	require.NoError(t, err)
	require.Len(t, v.Scenarios, 2)
	require.Len(t, v.Disks, 2, "one disk a recording")
	assert.Contains(t, v.Disks[0], "engine.LoopDisk")
	assert.Contains(t, v.Disks[1], "measured with the recording in "+filepath.Join(fast, "kernel", "6.18")+": reads 18.6 µs")
	pwriteNS := func(c Comparison) int64 {
		for _, r := range c.Times {
			if r.Op == 3 {
				return r.ModelNs
			}
		}
		t.Fatal("no time for the pwrites")
		return 0
	}
	builtin, measured := pwriteNS(v.Scenarios[0]), pwriteNS(v.Scenarios[1])
	assert.Less(t, measured, builtin*2/3, "a fifth the latency: %d ns against the built-in disk's %d", measured, builtin)

	l.Kernel += "-other"
	writeDisk(l)
	_, err = Validate(context.Background(), files[1:], Recorded(""), ValidateOptions{On: "recorded", Profile: p, Disk: RecordedDisk("")})
	assert.ErrorContains(t, err, "loop.json: loop disk measured on "+l.Kernel)
}
