package blk

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHDDService(t *testing.T) {
	h := HDD{SeqMBps: 250, OverheadNS: 10e3, AvgSeekNS: 8e6, RPM: 7500}
	position := 8e6 + 4e6 // average seek + half of a 8 ms rotation
	tests := []struct {
		name     string
		prevEnd  uint64
		havePrev bool
		sector   uint64
		sectors  uint64
		want     float64
	}{
		{"sequential 1000 KiB", 100, true, 100, 2000, 10e3 + 2000*512*1e3/250},
		{"sequential 4 KiB", 0, true, 0, 8, 10e3 + 4096*1e3/250},
		{"first request pays positioning", 0, false, 0, 8, 10e3 + 4096*1e3/250 + position},
		{"short gap ahead waits for it to pass", 100, true, 101, 8, 10e3 + 4096*1e3/250 + 512*1e3/250},
		{"long gap ahead pays positioning", 100, true, 100 + 1<<20, 8, 10e3 + 4096*1e3/250 + position},
		{"backwards pays positioning", 100, true, 50, 8, 10e3 + 4096*1e3/250 + position},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []Op{OpRead, OpWrite} {
				assert.InDelta(t, tc.want, h.Service(tc.prevEnd, tc.havePrev, op, tc.sector, tc.sectors), 1e-6)
			}
		})
	}
}

func TestSSDAndNullService(t *testing.T) {
	s := SSD{MBps: 500, LatencyNS: 20e3}
	for _, prev := range []uint64{0, 7, 1 << 30} {
		assert.InDelta(t, 20e3+8192*1e3/500, s.Service(prev, true, OpWrite, 7, 16), 1e-6)
	}
	assert.InDelta(t, 20e3+8192*1e3/500, s.Service(0, false, OpRead, 7, 16), 1e-6)
	assert.Zero(t, Null{}.Service(0, false, OpWrite, 1, 2560))
}

// TestReadWriteService: reads take the read side's price, writes and
// flushes the write side's.
func TestReadWriteService(t *testing.T) {
	rw := ReadWrite{Read: SSD{MBps: 4000, LatencyNS: 15e3}, Write: SSD{MBps: 2000, LatencyNS: 18e3}}
	for _, tc := range []struct {
		op   Op
		want float64
	}{
		{OpRead, 15e3 + 8192*1e3/4000.0},
		{OpWrite, 18e3 + 8192*1e3/2000.0},
		{OpFlush, 18e3 + 8192*1e3/2000.0},
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			assert.InDelta(t, tc.want, rw.Service(0, false, tc.op, 7, 16), 1e-6)
		})
	}
}

func TestModelValidate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		m    interface{ Validate() error }
		ok   bool
	}{
		{"WD8003FFBX", WD8003FFBX(), true},
		{"HDD zero rate", HDD{RPM: 7200}, false},
		{"HDD zero rpm", HDD{SeqMBps: 100}, false},
		{"HDD infinite rate", HDD{SeqMBps: inf, RPM: 7200}, false},
		{"HDD NaN seek", HDD{SeqMBps: 100, RPM: 7200, AvgSeekNS: math.NaN()}, false},
		{"HDD negative overhead", HDD{SeqMBps: 100, RPM: 7200, OverheadNS: -1}, false},
		{"HDD no overhead or seek", HDD{SeqMBps: 100, RPM: 7200}, true},
		{"SSD", SSD{MBps: 500}, true},
		{"SSD zero rate", SSD{}, false},
		{"SSD negative latency", SSD{MBps: 500, LatencyNS: -5}, false},
		{"ReadWrite", ReadWrite{Read: SSD{MBps: 500}, Write: SSD{MBps: 300, LatencyNS: 10}}, true},
		{"ReadWrite without a write rate", ReadWrite{Read: SSD{MBps: 500}}, false},
		{"ReadWrite with a NaN read latency", ReadWrite{Read: SSD{MBps: 500, LatencyNS: math.NaN()}, Write: SSD{MBps: 300}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ok {
				assert.NoError(t, tc.m.Validate())
			} else {
				assert.ErrorIs(t, tc.m.Validate(), ErrInvalidConfig)
			}
		})
	}
}

func TestWD8003FFBX(t *testing.T) {
	h := WD8003FFBX()
	require.NoError(t, h.Validate())
	// A stream of 1280 KiB requests runs within 1% of the media rate.
	ns := h.Service(0, true, OpWrite, 0, DefMaxSectors)
	mbps := float64(DefMaxSectors<<SectorShift) / ns * 1e3
	assert.InEpsilon(t, h.SeqMBps, mbps, 0.01)
	assert.Less(t, mbps, h.SeqMBps, "the command overhead costs something")
}

// hddStream writes count sequential 4 KiB bios from sector start through one
// plug on an HDD queue and returns the queue.
func hddStream(t *testing.T, h HDD, start uint64, count int) *Queue {
	t.Helper()
	q := newQueue(t, "sda", 64<<20, h, DefaultLimits(512, 4096))
	q.EnableTrace(64)
	c := newCompletions()
	var p Plug
	p.Start()
	for i := range count {
		SubmitBio(&p, q, c.pageBio(i, OpWrite, start+uint64(8*i), 4096, uint64(2*i), 0))
	}
	require.NoError(t, p.Finish())
	return q
}

func TestQueueBusyTime(t *testing.T) {
	h := HDD{SeqMBps: 200, OverheadNS: 50e3, AvgSeekNS: 5e6, RPM: 6000}
	position := 5e6 + 5e6
	transfer := func(sectors float64) float64 { return sectors * 512 * 1e3 / 200 }

	// 512 sequential 4 KiB bios: four requests of 128 bios; the first pays
	// positioning, the rest follow on.
	q := hddStream(t, h, 0, 512)
	assert.Equal(t, uint64(4), q.Stats().Write.Requests)
	want := position + 4*(50e3+transfer(1024))
	assert.InDelta(t, want, q.BusyNS(), 1e-3)
	assert.InDelta(t, want, q.Stats().BusyNS, 1e-3)

	// A random request after the stream pays positioning again.
	c := newCompletions()
	q.Submit(c.pageBio(0, OpWrite, 50000, 4096, 1, 0))
	assert.InDelta(t, want+position+50e3+transfer(8), q.BusyNS(), 1e-3)
	// And one that follows it does not.
	q.Submit(c.pageBio(1, OpWrite, 50008, 4096, 1, 0))
	assert.InDelta(t, want+position+2*(50e3+transfer(8)), q.BusyNS(), 1e-3)
}

func TestQueueBusyTimeDeterministic(t *testing.T) {
	a := hddStream(t, WD8003FFBX(), 8, 3000)
	b := hddStream(t, WD8003FFBX(), 8, 3000)
	assert.Equal(t, a.BusyNS(), b.BusyNS())
	assert.Equal(t, a.Trace(), b.Trace())
	assert.Len(t, a.Trace(), 24)
	assert.Positive(t, a.BusyNS())
}

// TestQueueRotational: a queue is rotational (queue/rotational 1) when its
// model is an HDD, also behind a power-cut recording; SSD and Null queues
// are not.
func TestQueueRotational(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model Model
		want  bool
	}{
		{"hdd", WD8003FFBX(), true},
		{"ssd", SSD{MBps: 500, LatencyNS: 20e3}, false},
		{"null", Null{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := NewMemDisk("sda", 1<<20, 512)
			require.NoError(t, err)
			q, err := NewQueue("sda", store, tc.model, DefaultLimits(512, 4096))
			require.NoError(t, err)
			assert.Equal(t, tc.want, q.Rotational())
			store2, err := NewMemDisk("sdb", 1<<20, 512)
			require.NoError(t, err)
			pq, err := NewPowerLog().NewQueue("sdb", store2, tc.model, DefaultLimits(512, 4096))
			require.NoError(t, err)
			assert.Equal(t, tc.want, pq.Rotational(), "behind a PowerLog")
		})
	}
}
