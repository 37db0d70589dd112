package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// arrayRun runs spec over hdd disks on the array a (the zero Array: one
// disk), ending with the last close, and returns the engine after the run.
func arrayRun(t *testing.T, spec string, a Array) *engine {
	t.Helper()
	return engineRun(t, spec, RunOptions{Profile: timing.Helios4(), Disk: Disk{Name: "hdd"}, LastClose: true, Array: a})
}

// loadNamed returns the load of e called name.
func loadNamed(t *testing.T, e *engine, name string) timing.Load {
	t.Helper()
	for _, l := range e.loads() {
		if l.Name == name {
			return l
		}
	}
	require.Failf(t, "no load", "%q", name)
	return timing.Load{}
}

// TestRunArray checks RunOptions.Array on the clock: each member is a disk
// of its own, serving at the same time as the others; md's per-bio work is
// charged to the CPUs that submit the bios, counted as the array counted
// it; a RAID6 write's stripes are raid5d's, a thread that is busy for
// them, whose member requests complete after it; and a RAID6 read has none
// (TestRunArrayReadsWait holds a read's time).
func TestRunArray(t *testing.T) {
	const write = "seq:dev=128M,n=128,size=1M,reads=0,cpus=1"
	const read = "seq:dev=128M,n=128,size=1M,reads=1,cpus=1"
	direct := arrayRun(t, write, Array{})
	tests := []struct {
		name   string
		spec   string
		array  Array
		copies float64 // the disks' work against one disk's
		raid5d bool
	}{
		{"raid0 of 4", write, Array{Level: md.Raid0, Members: 4}, 1, false},
		{"raid10f2 of 4", write, Array{Level: md.Raid10Far2, Members: 4}, 2, false},
		{"raid10n2 of 4", write, Array{Level: md.Raid10Near2, Members: 4}, 2, false},
		{"raid6 of 4, writes", write, Array{Level: md.Raid6, Members: 4}, 2, true},
		{"raid6 of 4, reads", read, Array{Level: md.Raid6, Members: 4}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := arrayRun(t, tc.spec, tc.array)
			require.Len(t, e.mr.members, tc.array.Members)
			st := e.mr.array.Stats()
			busy, most := 0.0, 0.0
			for i, q := range e.mr.members {
				l := loadNamed(t, e, q.Name()+" (hdd)")
				require.Less(t, i, len(e.clk.disks), "member %d served requests", i)
				assert.Equal(t, e.clk.disks[i].busy, l.FixedNS, "%s's load is its time serving", q.Name())
				assert.Positive(t, l.FixedNS, "%s served requests", q.Name())
				busy += l.FixedNS
				most = max(most, l.FixedNS)
			}
			r := e.result(true)
			if tc.copies > 0 {
				// every byte reaches tc.copies disks (RAID6 of 4: two data and
				// two parity units a stripe), each disk serving its share
				one := direct.clk.diskBusy()
				assert.InEpsilon(t, tc.copies*one, busy, 0.25, "the members' work against one disk's")
				assert.Less(t, most, 0.75*one, "the members serve at the same time")
			}

			var mdBios, stripes float64
			for _, l := range e.loads() {
				if strings.HasPrefix(l.Name, "all ") { // the all-CPU bound sums the others
					continue
				}
				mdBios += l.Q[timing.ParamMDBio]
				if l.Name != "md0_raid6" {
					assert.Zero(t, l.Q[timing.ParamStripe], "%s handles no stripes", l.Name)
				}
				stripes += l.Q[timing.ParamStripe]
			}
			assert.Equal(t, float64(st.BiosIn+st.Splits), mdBios, "md's passes are charged as the array counted them")
			assert.Equal(t, float64(st.Stripes), stripes, "raid5d handles the array's stripes")
			if !tc.raid5d {
				assert.Zero(t, e.clk.md.busy, "nothing for raid5d")
				return
			}
			th := loadNamed(t, e, "md0_raid6")
			assert.Positive(t, th.Q[timing.ParamStripe])
			assert.Equal(t, float64(st.MemberBios), th.Q[timing.ParamMemberBio], "raid5d sends the member bios")
			assert.GreaterOrEqual(t, e.clk.md.busy, e.o.Profile.BusyNS(&th)*(1-1e-9), "raid5d is busy for its work, stretched by the bus")
			assert.GreaterOrEqual(t, e.clk.diskFree(), e.clk.md.free-th.Q[timing.ParamStripe]*e.o.Profile.NS[timing.ParamStripe],
				"the member writes follow raid5d's work")
			assert.Contains(t, r.Header(), "md array (raid6 of 4 disks, 512 KiB chunks;")
		})
	}
}

// TestRunArrayRefused checks the options an array cannot take.
func TestRunArrayRefused(t *testing.T) {
	w := genWorkload(t, "seq:dev=16M,n=16,size=1M,cpus=1")
	for _, tc := range []struct {
		name  string
		array Array
		rules string
		want  string
	}{
		{"too many members", Array{Level: md.Raid0, Members: MaxArrayMembers + 1}, "", "an array of 28 members"},
		{"negative members", Array{Level: md.Raid0, Members: -1}, "", "an array of -1 members"},
		{"raid6 of 3", Array{Level: md.Raid6, Members: 3}, "", "raid6 needs at least 4"},
		{"a chunk not a power of two", Array{Level: md.Raid0, Members: 2, Chunk: 5 << 10}, "", "not a power of two"},
		{"rules", Array{Level: md.Raid0, Members: 2}, "wbps=1M", "not modelled on an md array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := w
			if tc.rules != "" {
				var err error
				wl.Rules, err = scenario.ParseRules(tc.rules)
				require.NoError(t, err)
			}
			_, err := Run(t.Context(), wl, RunOptions{Array: tc.array})
			require.ErrorIs(t, err, ErrRunOptions)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestParseArray checks the array spec's text.
func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Array
		err  string
	}{
		{"", Array{}, ""},
		{"raid6:4", Array{Level: md.Raid6, Members: 4}, ""},
		{"raid0:4:64K", Array{Level: md.Raid0, Members: 4, Chunk: 64 << 10}, ""},
		{"raid10f2:2:1M", Array{Level: md.Raid10Far2, Members: 2, Chunk: 1 << 20}, ""},
		{"raid6", Array{}, "want LEVEL:MEMBERS[:CHUNK]"},
		{"raid6:4:1M:x", Array{}, "want LEVEL:MEMBERS[:CHUNK]"},
		{"raid5:4", Array{}, "unknown RAID level"},
		{"raid0:x", Array{}, "members \"x\""},
		{"raid0:0", Array{}, "want 1 to 27"},
		{"raid0:28", Array{}, "want 1 to 27"},
		{"raid0:4:big", Array{}, "chunk \"big\""},
		{"raid0:4:0", Array{}, "chunk \"0\""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseArray(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseArray checks that any text parses to a valid-looking array or
// an error, never a panic, and that what parses names its level.
func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"raid6:4", "raid0:4:64K", "raid10n2:27:4G", ":", "raid0:-1", "raid0:4:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArray(s)
		if err != nil || s == "" {
			return
		}
		assert.True(t, a.Members >= 1 && a.Members <= MaxArrayMembers, "%q: %d members", s, a.Members)
		assert.True(t, strings.HasPrefix(a.String(), a.Level.String()+" of "), "%q: %s", s, a)
	})
}

// TestMemberName checks the members' names, as the kernel's sd driver
// names disks.
func TestMemberName(t *testing.T) {
	for i, want := range map[int]string{0: "sda", 1: "sdb", 25: "sdz", 26: "sdaa", 27: "sdab"} {
		assert.Equal(t, want, MemberName(i), "disk %d", i)
	}
}

// TestRunLimits checks RunOptions.Limits: a disk of the Helios4's AHCI
// queue (168 segments) gets requests of 168 512-byte buffers, where the
// loop-like queue's 128 segments cut them at 128; and limits that do not
// fit the workload are refused.
func TestRunLimits(t *testing.T) {
	const spec = "seq:dev=8M,n=8,size=1M,reads=0,cpus=1"
	k := MustKernel("5.10.10") // 512-byte buffers on a disk of 512-byte blocks
	ahci := blk.DefaultLimits(512, 4096)
	ahci.MaxSegments = blk.AHCIMaxSegments
	requests := func(lim *blk.Limits) uint64 {
		e := engineRun(t, spec, RunOptions{Kernel: k, Profile: timing.Helios4(), LastClose: true, Limits: lim})
		st := e.mr.queue.Stats()
		require.Equal(t, uint64(8<<20>>9), st.Write.Sectors, "the close wrote everything")
		return st.Write.Requests
	}
	loop, sata := requests(nil), requests(&ahci)
	assert.Equal(t, uint64(8<<20/(128*512)), loop, "128 buffers a request")
	assert.Equal(t, uint64((8<<20+168*512-1)/(168*512)), sata, "168 buffers a request")

	w := genWorkload(t, spec)
	bad := blk.DefaultLimits(4096, 4096)
	_, err := Run(t.Context(), w, RunOptions{Limits: &bad})
	require.ErrorIs(t, err, ErrRunOptions)
	assert.Contains(t, err.Error(), "queue limits of 4096-byte logical blocks for a device of 512-byte blocks")
	w.Rules, err = scenario.ParseRules("wbps=1M")
	require.NoError(t, err)
	_, err = Run(t.Context(), w, RunOptions{Limits: &ahci})
	require.ErrorIs(t, err, ErrRunOptions)
	assert.Contains(t, err.Error(), "give one")
}

// TestRunArrayRefusesABackingStore checks that a scenario whose setup
// fills its loop device's backing store is refused on an array, which has
// none, rather than run.
func TestRunArrayRefusesABackingStore(t *testing.T) {
	s, err := scenario.ParseFile("../../testdata/scenarios/wberr-read-after-drop.scn")
	require.NoError(t, err)
	w, err := ScenarioWorkload(s)
	require.NoError(t, err)
	_, err = Run(t.Context(), w, RunOptions{Array: Array{Level: md.Raid0, Members: 2}})
	require.ErrorIs(t, err, ErrRunOptions)
	assert.Contains(t, err.Error(), "an md array has none")
}

// TestRunArrayReadsWait: on an array a read waits for its own request, at
// queue depth 1, so random 4 KiB reads on RAID0 over hdd disks take a
// disk's access each, no faster than on one disk; and a discard is refused
// with EOPNOTSUPP.
func TestRunArrayReadsWait(t *testing.T) {
	const spec = "random:dev=64M,n=200,size=4K,reads=1,cpus=1,seed=9"
	one, arr := arrayRun(t, spec, Array{}), arrayRun(t, spec, Array{Level: md.Raid0, Members: 4})
	rd, rdArr := one.result(true).Kinds[0], arr.result(true).Kinds[0]
	require.Equal(t, "read", rdArr.Kind)
	assert.Greater(t, rdArr.Latency.P50NS, uint64(1e6), "a random read on a disk takes milliseconds")
	assert.InEpsilon(t, rd.Latency.MeanNS, rdArr.Latency.MeanNS, 0.2, "one disk's access a read, on an array as on one disk")

	w := csvWorkload("d.csv", "write,0,64K\ndiscard,0,64K\n", 1<<20, 512, 1)
	r, err := Run(t.Context(), w, RunOptions{Array: Array{Level: md.Raid0, Members: 2}})
	require.NoError(t, err)
	d, ok := r.Kind("discard")
	require.True(t, ok)
	assert.Equal(t, map[string]uint64{"EOPNOTSUPP": 1}, d.Errnos, "md's discard is not modelled")
}
