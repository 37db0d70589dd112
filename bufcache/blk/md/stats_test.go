package md

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestStats checks the counters of single bios against hand counts, and that
// the members served exactly the member bios counted.
func TestStats(t *testing.T) {
	const K, M = 1 << 10, 1 << 20
	tests := []struct {
		name    string
		level   Level
		members int
		chunk   uint32
		op      blk.Op
		off     uint64 // bytes
		size    uint32
		want    Stats
	}{
		{"raid6 1 MiB aligned write is all full stripes", Raid6, 4, 512 * K, blk.OpWrite, 0, M,
			Stats{BiosIn: 1, BytesIn: M, WriteBios: 1, MemberBios: 128 * 4, StripeAttach: 256, Stripes: 128, FullStripeWrites: 128, ParityBytes: 128 * 8 * K}},
		{"raid6 4 KiB write reconstructs", Raid6, 4, 512 * K, blk.OpWrite, 0, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, WriteBios: 1, MemberBios: 1 + 3, MemberReads: 1, StripeAttach: 1, Stripes: 1, RMWWrites: 1, ReconstructWrites: 1, ParityBytes: 8 * K}},
		{"raid6 512 B write reads both data units", Raid6, 4, 512 * K, blk.OpWrite, 512 * K, 512,
			Stats{BiosIn: 1, BytesIn: 512, WriteBios: 1, MemberBios: 2 + 3, MemberReads: 2, StripeAttach: 1, Stripes: 1, RMWWrites: 1, ReconstructWrites: 1, ParityBytes: 8 * K}},
		{"raid6 8 members 4 KiB write is rmw", Raid6, 8, 64 * K, blk.OpWrite, 4 * K, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, WriteBios: 1, MemberBios: 3 + 3, MemberReads: 3, StripeAttach: 1, Stripes: 1, RMWWrites: 1, ParityBytes: 8 * K}},
		{"raid6 6 members whole unit: a tie goes to rcw", Raid6, 6, 64 * K, blk.OpWrite, 0, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, WriteBios: 1, MemberBios: 3 + 3, MemberReads: 3, StripeAttach: 1, Stripes: 1, RMWWrites: 1, ReconstructWrites: 1, ParityBytes: 8 * K}},
		{"raid6 6 members partial unit is rmw", Raid6, 6, 64 * K, blk.OpWrite, 0, 512,
			Stats{BiosIn: 1, BytesIn: 512, WriteBios: 1, MemberBios: 3 + 3, MemberReads: 3, StripeAttach: 1, Stripes: 1, RMWWrites: 1, ParityBytes: 8 * K}},
		{"raid6 write across a chunk boundary touches two stripes", Raid6, 4, 64 * K, blk.OpWrite, 60 * K, 8 * K,
			Stats{BiosIn: 1, BytesIn: 8 * K, WriteBios: 1, MemberBios: 2 * (1 + 3), MemberReads: 2, StripeAttach: 2, Stripes: 2, RMWWrites: 2, ReconstructWrites: 2, ParityBytes: 16 * K}},
		{"raid6 write across rows", Raid6, 4, 64 * K, blk.OpWrite, 124 * K, 8 * K,
			Stats{BiosIn: 1, BytesIn: 8 * K, WriteBios: 1, MemberBios: 2 * (1 + 3), MemberReads: 2, StripeAttach: 2, Stripes: 2, RMWWrites: 2, ReconstructWrites: 2, ParityBytes: 16 * K}},
		{"raid6 read bypasses the stripe cache", Raid6, 4, 512 * K, blk.OpRead, 0, M,
			Stats{BiosIn: 1, BytesIn: M, MemberBios: 2, Splits: 1}},
		{"raid0 1 MiB write", Raid0, 4, 64 * K, blk.OpWrite, 0, M,
			Stats{BiosIn: 1, BytesIn: M, MemberBios: 16, Splits: 15}},
		{"raid0 4 KiB read inside a chunk", Raid0, 4, 64 * K, blk.OpRead, 8 * K, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, MemberBios: 1}},
		{"raid0 read across a chunk boundary", Raid0, 4, 64 * K, blk.OpRead, 62 * K, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, MemberBios: 2, Splits: 1}},
		{"raid10n2 1 MiB write", Raid10Near2, 4, 64 * K, blk.OpWrite, 0, M,
			Stats{BiosIn: 1, BytesIn: M, WriteBios: 16, MemberBios: 32, Splits: 15}},
		{"raid10n2 1 MiB read", Raid10Near2, 4, 64 * K, blk.OpRead, 0, M,
			Stats{BiosIn: 1, BytesIn: M, MemberBios: 16, Splits: 15}},
		{"raid10f2 1 MiB write", Raid10Far2, 4, 64 * K, blk.OpWrite, 0, M,
			Stats{BiosIn: 1, BytesIn: M, WriteBios: 16, MemberBios: 32, Splits: 15}},
		{"raid10f2 4 KiB write", Raid10Far2, 4, 64 * K, blk.OpWrite, 0, 4 * K,
			Stats{BiosIn: 1, BytesIn: 4 * K, WriteBios: 1, MemberBios: 2}},
	}
	for _, tc := range tests {
		for _, data := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/data=%t", tc.name, data), func(t *testing.T) {
				a, disks := newArray(t, tc.level, tc.members, 2*M, tc.chunk)
				o := ioOpts{size: tc.size}
				if data {
					o.data = make([]byte, tc.size)
				}
				require.NoError(t, doIO(t, a, tc.op, tc.off>>blk.SectorShift, o))
				assert.Equal(t, tc.want, a.Stats())
				var served, reads uint64
				for _, d := range disks {
					s := d.Stats()
					served += s.Reads + s.Writes
					reads += s.Reads
				}
				assert.Equal(t, tc.want.MemberBios, served, "member bios served")
				if tc.op == blk.OpWrite {
					assert.Equal(t, tc.want.MemberReads, reads, "pre-reads served")
				}
			})
		}
	}
}

// TestStatsAccumulate checks that counters add up over bios.
func TestStatsAccumulate(t *testing.T) {
	a, _ := newArray(t, Raid0, 4, 1<<20, 64<<10)
	for range 3 {
		require.NoError(t, doIO(t, a, blk.OpWrite, 120, ioOpts{size: 8192}))
	}
	assert.Equal(t, Stats{BiosIn: 3, BytesIn: 3 * 8192, MemberBios: 6, Splits: 3}, a.Stats())
}

// TestStatsSub fills every counter of two snapshots with distinct values
// and checks that Sub subtracts each one: a counter added to Stats and
// left out of Sub fails here.
func TestStatsSub(t *testing.T) {
	var later, earlier Stats
	lv, ev := reflect.ValueOf(&later).Elem(), reflect.ValueOf(&earlier).Elem()
	for i := range lv.NumField() {
		lv.Field(i).SetUint(uint64(1000 + 7*i))
		ev.Field(i).SetUint(uint64(3 * i))
	}
	d := reflect.ValueOf(later.Sub(earlier))
	for i := range d.NumField() {
		assert.Equal(t, uint64(1000+4*i), d.Field(i).Uint(), lv.Type().Field(i).Name)
	}
}
