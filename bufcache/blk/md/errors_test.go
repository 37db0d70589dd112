package md

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestNewErrors checks New's rejections.
func TestNewErrors(t *testing.T) {
	disks := func(n int, size uint64, lbs uint32) []blk.Device { return devices(newDisks(t, n, size, lbs)) }
	mixed := func(size2 uint64, lbs2 uint32) []blk.Device {
		devs := disks(3, 1<<20, 512)
		return append(devs, devices(newDisks(t, 1, size2, lbs2))...)
	}
	tests := []struct {
		name    string
		cfg     Config
		members []blk.Device
		want    error
	}{
		{"unknown level", Config{Level: 4}, disks(4, 1<<20, 512), ErrBadLevel},
		{"chunk below a page", Config{ChunkSize: 2048}, disks(4, 1<<20, 512), ErrBadChunk},
		{"chunk not a power of two", Config{ChunkSize: 3 * 4096}, disks(4, 1<<20, 512), ErrBadChunk},
		{"chunk below the logical block", Config{ChunkSize: 4096}, disks(4, 1<<20, 8192), ErrBadChunk},
		{"raid0 of one", Config{Level: Raid0}, disks(1, 1<<20, 512), ErrTooFewMembers},
		{"raid0 of none", Config{Level: Raid0}, nil, ErrTooFewMembers},
		{"raid10n2 of one", Config{Level: Raid10Near2}, disks(1, 1<<20, 512), ErrTooFewMembers},
		{"raid10f2 of one", Config{Level: Raid10Far2}, disks(1, 1<<20, 512), ErrTooFewMembers},
		{"raid6 of three", Config{Level: Raid6}, disks(3, 1<<20, 512), ErrTooFewMembers},
		{"raid6 of 258", Config{Level: Raid6, ChunkSize: 4096}, disks(258, 4096, 512), ErrTooManyMembers},
		{"sizes differ", Config{Level: Raid0}, mixed(2<<20, 512), ErrMemberMismatch},
		{"logical blocks differ", Config{Level: Raid0}, mixed(1<<20, 4096), ErrMemberMismatch},
		{"nil member", Config{Level: Raid0}, append(disks(3, 1<<20, 512), nil), ErrBadMember},
		{"raid0 members below a chunk", Config{Level: Raid0}, disks(4, 256<<10, 512), ErrBadMember},
		{"raid10f2 members of one chunk", Config{Level: Raid10Far2, ChunkSize: 64 << 10}, disks(4, 64<<10, 512), ErrBadMember},
		{"raid6 with 8 KiB logical blocks", Config{Level: Raid6, ChunkSize: 64 << 10}, disks(4, 1<<20, 8192), ErrBadMember},
		{"stripe cache of 16", Config{Level: Raid6, StripeCacheSize: MinStripeCacheSize - 1}, disks(4, 1<<20, 512), ErrBadStripeCache},
		{"stripe cache above 32768", Config{Level: Raid6, StripeCacheSize: MaxStripeCacheSize + 1}, disks(4, 1<<20, 512), ErrBadStripeCache},
		{"negative stripe cache", Config{Level: Raid6, StripeCacheSize: -1}, disks(4, 1<<20, 512), ErrBadStripeCache},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.cfg, tc.members)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, a)
		})
	}
}

// TestSubmitErrors checks bios the array rejects: they complete once with the
// error and are not counted.
func TestSubmitErrors(t *testing.T) {
	for _, level := range allLevels {
		t.Run("level="+level.String(), func(t *testing.T) {
			disks := newDisks(t, 4, 1<<20, 4096)
			a, err := New(Config{Level: level, ChunkSize: 64 << 10}, devices(disks))
			require.NoError(t, err)
			end := a.Sectors()
			tests := []struct {
				name   string
				op     blk.Op
				sector uint64
				o      ioOpts
				want   error
			}{
				{"past the end", blk.OpWrite, end - 8, ioOpts{size: 8192}, blk.ErrBeyondEnd},
				{"at the end", blk.OpRead, end, ioOpts{size: 4096}, blk.ErrBeyondEnd},
				{"start not on a logical block", blk.OpWrite, 1, ioOpts{size: 4096}, blk.ErrMisaligned},
				{"length not a logical block", blk.OpRead, 0, ioOpts{size: 512}, blk.ErrMisaligned},
				{"empty", blk.OpWrite, 0, ioOpts{}, blk.ErrMisaligned},
				{"unknown op", blk.Op(7), 0, ioOpts{size: 4096}, blk.ErrNotSupported},
			}
			for _, tc := range tests {
				err := doIO(t, a, tc.op, tc.sector, tc.o)
				assert.ErrorIs(t, err, tc.want, tc.name)
			}

			var b blk.Bio
			b.Reset(blk.OpWrite, 0)
			b.AddVec(make([]byte, 4096), 4096)
			b.AddVec(nil, 4096)
			calls := 0
			b.EndIO = func(*blk.Bio) { calls++ }
			a.Submit(&b)
			assert.Equal(t, 1, calls)
			assert.ErrorIs(t, b.Err, ErrMixedData)

			assert.Zero(t, a.Stats())
			for _, d := range disks {
				assert.Zero(t, d.Stats())
			}
		})
	}
}

// faultDisk wraps a MemDisk and fails every bio of one operation with
// blk.ErrIO, without touching the store.
type faultDisk struct {
	*blk.MemDisk
	op     blk.Op
	failed int
}

// Submit implements blk.Device.
func (d *faultDisk) Submit(b *blk.Bio) {
	if b.Op == d.op {
		d.failed++
		b.Complete(fmt.Errorf("%w: injected on %s", blk.ErrIO, d.Name()))
		return
	}
	d.MemDisk.Submit(b)
}

// TestMemberError checks what a failing member does to the parent, which
// completes once, after all member bios completed: raid0 fails it with the
// member's error; raid10 and raid6 mark the member faulty and serve the bio
// degraded (see degraded_test.go for the data).
func TestMemberError(t *testing.T) {
	tests := []struct {
		level      Level
		op         blk.Op
		sector     uint64
		size       uint32
		failDev    int
		failOp     blk.Op
		wantFailed int
		wantBios   uint64 // member bios issued
		wantErr    bool
	}{
		{Raid0, blk.OpRead, 0, 64 << 10, 1, blk.OpRead, 1, 4, true},
		{Raid0, blk.OpWrite, 0, 64 << 10, 2, blk.OpWrite, 1, 4, true},
		{Raid10Near2, blk.OpWrite, 0, 16 << 10, 1, blk.OpWrite, 1, 2, false},
		// The read is sent again to the other copy, on member 1.
		{Raid10Near2, blk.OpRead, 0, 16 << 10, 0, blk.OpRead, 1, 2, false},
		{Raid10Far2, blk.OpWrite, 0, 16 << 10, 1, blk.OpWrite, 1, 2, false},
		// D0 on member 1 is rebuilt from the other three members.
		{Raid6, blk.OpRead, 0, 16 << 10, 1, blk.OpRead, 1, 4, false},
		// A 4 KiB write to row 0 unit 0 pre-reads D1 on member 2: it fails, so
		// the stripe pre-reads the three others to rebuild D1 and writes D0, P
		// and Q.
		{Raid6, blk.OpWrite, 0, 4096, 2, blk.OpRead, 1, 1 + 3 + 3, false},
		// A full-row write: 4 stripes of 4 bios; writing P on member 3 fails in
		// each, and the data is in D0, D1 and Q.
		{Raid6, blk.OpWrite, 0, 32 << 10, 3, blk.OpWrite, 4, 16, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("level=%s/op=%s/fail=%s", tc.level, tc.op, tc.failOp), func(t *testing.T) {
			disks := newDisks(t, 4, 1<<20, 512)
			devs := devices(disks)
			bad := &faultDisk{MemDisk: disks[tc.failDev], op: tc.failOp}
			devs[tc.failDev] = bad
			a, err := New(Config{Level: tc.level, ChunkSize: 16 << 10}, devs)
			require.NoError(t, err)
			err = doIO(t, a, tc.op, tc.sector, ioOpts{data: make([]byte, tc.size)})
			if tc.wantErr {
				assert.ErrorIs(t, err, blk.ErrIO)
				assert.ErrorContains(t, err, fmt.Sprintf("injected on sd%c", 'a'+tc.failDev))
				assert.Empty(t, a.Failed())
			} else {
				assert.NoError(t, err)
				assert.Equal(t, []int{tc.failDev}, a.Failed())
			}
			assert.Equal(t, tc.wantFailed, bad.failed)
			assert.Equal(t, tc.wantBios, a.Stats().MemberBios)
			assert.Equal(t, uint64(tc.wantFailed), a.Stats().MemberErrors)

			// Nothing is left behind: no stripe_head is in use and the last
			// chunk (on a healthy member in every case) reads.
			require.Zero(t, stripesInUse(a), "stripe_heads released")
			require.NoError(t, doIO(t, a, blk.OpRead, a.Sectors()-8, ioOpts{size: 4096}))
		})
	}
}
