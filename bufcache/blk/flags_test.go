package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBioFlagsString(t *testing.T) {
	tests := []struct {
		f    BioFlags
		want string
	}{
		{0, "0"},
		{FlagSync, "sync"},
		{FlagSync | FlagPreflush, "sync|preflush"},
		{FlagFUA | FlagRahead | FlagIdle, "fua|rahead|idle"},
		{FlagSync | 1<<10, "sync|0x400"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.f.String(), "%#x", uint32(tc.f))
	}
}

func TestResetClearsFlags(t *testing.T) {
	var b Bio
	b.Reset(OpWrite, 8)
	b.Flags = FlagSync | FlagFUA
	b.Reset(OpRead, 0)
	assert.Zero(t, b.Flags)
}

func TestIsFlush(t *testing.T) {
	data := func(op Op, f BioFlags) *Bio {
		b := &Bio{}
		b.Reset(op, 0)
		b.Flags = f
		b.AddVec(nil, 512)
		return b
	}
	empty := func(op Op, f BioFlags) *Bio {
		b := &Bio{}
		b.Reset(op, 0)
		b.Flags = f
		return b
	}
	tests := []struct {
		name  string
		b     *Bio
		flush bool
		err   error // CheckBio's
	}{
		{"empty preflush write", empty(OpWrite, FlagPreflush|FlagSync), true, nil},
		{"empty write", empty(OpWrite, FlagSync), false, ErrMisaligned},
		{"empty FUA write", empty(OpWrite, FlagFUA), false, ErrMisaligned},
		{"empty preflush read", empty(OpRead, FlagPreflush), false, ErrMisaligned},
		{"data preflush write", data(OpWrite, FlagPreflush), false, nil},
		{"data write", data(OpWrite, 0), false, nil},
	}
	disk, err := NewMemDisk("d", 1<<20, 512)
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.flush, tc.b.IsFlush())
			err := CheckBio(disk, tc.b)
			if tc.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.err)
			}
		})
	}
}

// A flush at a sector past the end is still a flush: it addresses no sector.
func TestFlushIgnoresSector(t *testing.T) {
	disk, err := NewMemDisk("d", 1<<20, 4096)
	require.NoError(t, err)
	b := &Bio{}
	b.Reset(OpWrite, 1<<40+1)
	b.Flags = FlagPreflush
	assert.NoError(t, CheckBio(disk, b))
}

func TestFlushOnEveryDevice(t *testing.T) {
	mem, err := NewMemDisk("mem", 1<<20, 512)
	require.NoError(t, err)
	null, err := NewNullDisk("null", 1<<20, 512)
	require.NoError(t, err)
	q := newQueue(t, "q", 1<<20, Null{}, DefaultLimits(512, 4096))
	faultyMem, err := NewMemDisk("fm", 1<<20, 512)
	require.NoError(t, err)
	faulty, err := NewFaultyDevice(faultyMem, 1)
	require.NoError(t, err)
	faulty.SetReadOnly(true)
	require.NoError(t, faulty.FailRate(OpWrite, 1))
	for _, d := range []Device{mem, null, q, faulty} {
		for _, plugged := range []bool{false, true} {
			c := newCompletions()
			b := c.bio(0, OpWrite, 0)
			b.Flags = FlagPreflush | FlagSync
			var p Plug
			if plugged {
				p.Start()
			}
			SubmitBio(&p, d, b)
			assert.Equal(t, []int{0}, c.order, "%s plugged %v: completes at once", d.Name(), plugged)
			assert.NoError(t, c.errs[0], d.Name())
			assert.Zero(t, p.Len(), "a flush never waits in the plug")
			if plugged {
				require.NoError(t, p.Finish())
			}
		}
	}
	assert.Equal(t, DiskStats{}, mem.Stats(), "a flush moves no data")
	assert.Equal(t, FaultStats{}, faulty.Stats(), "a flush is not counted, nor failed")
	assert.Equal(t, QueueStats{}, q.Stats())
}

// On a queue without a volatile write cache the flush flags of a data bio are
// dropped: the bio is an ordinary write that merges.
func TestWriteThroughDropsFlushFlags(t *testing.T) {
	q := newQueue(t, "q", 1<<20, Null{}, DefaultLimits(512, 4096))
	c := newCompletions()
	var p Plug
	p.Start()
	a := c.pageBio(0, OpWrite, 0, 4096, 1, 0)
	b := c.pageBio(1, OpWrite, 8, 4096, 2, 0)
	b.Flags = FlagPreflush | FlagFUA | FlagSync
	SubmitBio(&p, q, a)
	SubmitBio(&p, q, b)
	assert.Equal(t, FlagSync, b.Flags)
	require.NoError(t, p.Finish())
	assert.Equal(t, []int{0, 1}, c.order)
	assert.Equal(t, OpStats{Requests: 1, Bios: 2, Merges: 1, Sectors: 16}, q.Stats().Write)
}
