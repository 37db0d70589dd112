package md

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestMemberBiosMergeUnderThePlug: raid0/raid10 write member bios go through
// the submitter's plug, so 4 KiB writes sent one by one reach the member queues
// as merged requests; without a plug every member bio is a request of its own.
// Data lands where a direct submission puts it.
func TestMemberBiosMergeUnderThePlug(t *testing.T) {
	const member = 4 << 20
	for _, level := range []Level{Raid0, Raid10Near2, Raid10Far2} {
		for _, plugged := range []bool{false, true} {
			t.Run(fmt.Sprintf("level=%s/plugged=%v", level, plugged), func(t *testing.T) {
				var queues []*blk.Queue
				var members []blk.Device
				for i := range 4 {
					store, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), member, 512)
					require.NoError(t, err)
					q, err := blk.NewQueue("", store, blk.Null{}, blk.DefaultLimits(512, 4096))
					require.NoError(t, err)
					queues, members = append(queues, q), append(members, q)
				}
				a, err := New(Config{Level: level, ChunkSize: 64 << 10}, members)
				require.NoError(t, err)
				data := make([]byte, 1<<20)
				for i := range data {
					data[i] = byte(i / 4096)
				}
				var plug blk.Plug
				if plugged {
					plug.Start()
				}
				done := 0
				for off := 0; off < len(data); off += 4096 {
					b := new(blk.Bio)
					b.Reset(blk.OpWrite, uint64(off)>>blk.SectorShift)
					b.AddPage(data[off:off+4096], 4096, uint64(2*off/4096), 0)
					b.EndIO = func(b *blk.Bio) { require.NoError(t, b.Err); done++ }
					blk.SubmitBio(&plug, a, b)
				}
				if plugged {
					require.NoError(t, plug.Finish())
				}
				assert.Equal(t, 256, done, "every parent bio completed")
				var reqs, bios uint64
				for _, q := range queues {
					reqs += q.Stats().Write.Requests
					bios += q.Stats().Write.Bios
				}
				if plugged {
					assert.Less(t, reqs*8, bios, "member bios merged: %d requests for %d bios", reqs, bios)
				} else {
					assert.Equal(t, bios, reqs, "no plug: one request per member bio")
				}
				got := make([]byte, len(data))
				r := new(blk.Bio)
				r.Reset(blk.OpRead, 0)
				r.AddVec(got, uint32(len(got)))
				r.EndIO = func(*blk.Bio) {}
				a.Submit(r)
				require.NoError(t, r.Err)
				assert.True(t, bytes.Equal(data, got))
			})
		}
	}
}

// TestPlugStreamBlockSizes writes a 2 MiB sequential stream to a four-disk
// raid6 over request queues as 512-byte bios and as 4096-byte bios, under a
// plug finished every flushEvery bytes as writeback finishes its plug, and
// checks that the members see the same I/O either way — the same stripes
// handled the same way, the same member bios, requests and bytes — while md
// attaches eight times as often. Flushing mid-row, or a small stripe cache,
// leaves partial stripes that pre-read, equally for both block sizes.
func TestPlugStreamBlockSizes(t *testing.T) {
	const stream = 2 << 20
	tests := []struct {
		name        string
		chunk       uint32
		cache       int
		flushEvery  uint64
		wantPartial bool
	}{
		{"chunk=512K/flush=1M", 512 << 10, 0, 1 << 20, false},
		{"chunk=64K/flush=256K", 64 << 10, 0, 256 << 10, false},
		{"chunk=64K/flush=96K", 64 << 10, 0, 96 << 10, true},
		{"chunk=64K/cache=17", 64 << 10, MinStripeCacheSize, stream, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := func(bs uint64) (Stats, memberIO) {
				a, queues, disks := newQueueArray(t, Raid6, 4, 2<<20, tc.chunk, tc.cache)
				rng := rand.New(rand.NewPCG(9, 9)) // the same data for both sizes
				oracle := make([]byte, a.Sectors()<<blk.SectorShift)
				copy(oracle, fill(rng, stream))
				var log bioLog
				var plug blk.Plug
				plug.Start()
				for off := uint64(0); off < stream; off += bs {
					if off > 0 && off%tc.flushEvery == 0 {
						require.NoError(t, plug.Finish())
						plug.Start()
					}
					blk.SubmitBio(&plug, a, log.bio(blk.OpWrite, off>>blk.SectorShift, oracle[off:off+bs], 0, off/4096))
				}
				require.NoError(t, plug.Finish())
				log.checkOnce(t)
				checkMembers(t, a, disks, oracle)
				return a.Stats(), servedBy(queues)
			}
			small, smallIO := run(512)
			large, largeIO := run(4096)
			assert.Equal(t, 8*large.BiosIn, small.BiosIn)
			assert.Equal(t, 8*large.StripeAttach, small.StripeAttach)
			assert.Equal(t, large.WriteBios, large.BiosIn)
			for _, c := range []struct {
				name         string
				small, large uint64
			}{
				{"stripes", small.Stripes, large.Stripes},
				{"full-stripe writes", small.FullStripeWrites, large.FullStripeWrites},
				{"pre-read stripes", small.RMWWrites, large.RMWWrites},
				{"member bios", small.MemberBios, large.MemberBios},
				{"pre-reads", small.MemberReads, large.MemberReads},
				{"parity bytes", small.ParityBytes, large.ParityBytes},
			} {
				assert.Equal(t, c.large, c.small, c.name)
			}
			assert.Equal(t, largeIO, smallIO, "member requests and sectors")
			if tc.wantPartial {
				assert.NotZero(t, large.MemberReads, "partial stripes pre-read")
			} else {
				assert.Zero(t, small.MemberReads)
				assert.Equal(t, small.Stripes, small.FullStripeWrites)
				assert.Equal(t, uint64(2*stream>>blk.SectorShift), smallIO.WriteSectors, "the data and as much parity")
				assert.Less(t, smallIO.WriteRequests*16, small.MemberBios, "member bios merged")
			}
		})
	}
}

// TestStripeCacheLimit writes 1 MiB to a four-disk raid6 (chunk 64 KiB, 16
// stripes a row) with the default stripe cache and with the smallest one:
// never more stripe_heads in use than the limit; when it is exhausted the
// waiting stripes are handled before the plug is finished, and those whose
// row is not complete yet pre-read; every bio completes exactly once and the
// data is right.
func TestStripeCacheLimit(t *testing.T) {
	const total = 1 << 20
	tests := []struct {
		name        string
		cache       int
		bs          uint64
		plugged     bool
		wantEarly   bool // stripes handled before the plug was finished
		wantPartial bool
	}{
		{"cache=256/bs=4K/plugged", 0, 4096, true, false, false},
		{"cache=17/bs=4K/plugged", MinStripeCacheSize, 4096, true, true, true},
		{"cache=17/bs=512/plugged", MinStripeCacheSize, 512, true, true, true},
		{"cache=17/one 1 MiB bio/plugged", MinStripeCacheSize, total, true, true, true},
		{"cache=17/one 1 MiB bio/unplugged", MinStripeCacheSize, total, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disks := newDisks(t, 4, 1<<20, 512)
			a, err := New(Config{Level: Raid6, ChunkSize: 64 << 10, StripeCacheSize: tc.cache}, devices(disks))
			require.NoError(t, err)
			limit := tc.cache
			if limit == 0 {
				limit = DefaultStripeCacheSize
			}
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			copy(oracle, fill(rand.New(rand.NewPCG(4, 4)), total))
			var log bioLog
			var plug blk.Plug
			p := &plug
			if tc.plugged {
				plug.Start()
			} else {
				p = nil
			}
			for off := uint64(0); off < total; off += tc.bs {
				blk.SubmitBio(p, a, log.bio(blk.OpWrite, off>>blk.SectorShift, oracle[off:off+tc.bs], 0, off/4096))
				require.LessOrEqual(t, stripesInUse(a), limit)
			}
			if tc.plugged {
				assert.Equal(t, tc.wantEarly, a.Stats().Stripes > 0, "stripes handled before Finish")
				require.NoError(t, plug.Finish())
			}
			log.checkOnce(t)
			assert.LessOrEqual(t, a.cache.made, limit, "stripe_heads allocated")
			assert.Zero(t, stripesInUse(a))
			st := a.Stats()
			assert.NotZero(t, st.FullStripeWrites)
			assert.Equal(t, tc.wantPartial, st.ReconstructWrites > 0, "partial stripes reconstruct-write")
			got := make([]byte, len(oracle))
			require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
			assert.Equal(t, oracle, got)
			checkMembers(t, a, disks, oracle)
		})
	}
}

// TestPlugSharedStripe submits writes that meet in one stripe from two plugs
// driven by one goroutine (two CPUs taking turns) and from one plug. A stripe
// waiting in the other plug is handled first, completing that plug's bio
// early; a write overlapping one waiting in its own plug, or mixing data and
// metadata-only writes in a stripe, flushes its plug first. Later writes win,
// every bio completes exactly once, and the members are consistent.
func TestPlugSharedStripe(t *testing.T) {
	const chunk = 64 << 10
	type op struct {
		plug    int    // which plug submits
		off, n  uint64 // array bytes
		data    bool   // false: metadata-only
		wantEnd int    // bios completed after this submission
	}
	// Plug 0 fills a cache of 17 stripes — the 16 units of chunk 0 and the
	// first of row 1 — and plug 1 needs an 18th: the second unit of row 1.
	var fill17 []op
	for i := range uint64(chunk / 4096) {
		fill17 = append(fill17, op{0, i * 4096, 4096, true, 0})
	}
	fill17 = append(fill17, op{0, 2 * chunk, 4096, true, 0})
	tests := []struct {
		name        string
		cache       int
		ops         []op
		wantStripes uint64
	}{
		{"other plug, other data unit", 0, []op{
			{0, 0, 4096, true, 0},
			{1, chunk, 4096, true, 1}, // plug 0's stripe is handled first
		}, 2},
		{"other plug, same bytes", 0, []op{
			{0, 0, 4096, true, 0},
			{1, 0, 4096, true, 1},
		}, 2},
		{"same plug, other sectors of the unit", 0, []op{
			{0, 0, 2048, true, 0},
			{0, 2048, 2048, true, 0},
			{0, chunk, 4096, true, 0},
		}, 1},
		{"same plug, overlap", 0, []op{
			{0, 0, 2048, true, 0},
			{0, 1024, 2048, true, 1}, // add_stripe_bio's overlap: the plug is flushed
			{0, chunk, 4096, true, 1},
		}, 2},
		{"same plug, data then metadata-only", 0, []op{
			{0, 0, 2048, true, 0},
			{0, 2048, 2048, false, 1},
		}, 2},
		// No free stripe_head and none of plug 1's own: the stripes waiting in
		// plug 0 are handled to free some.
		{"cache full of the other plug", MinStripeCacheSize,
			append(fill17, op{1, 2*chunk + 4096, 4096, true, MinStripeCacheSize}), MinStripeCacheSize + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disks := newDisks(t, 4, 1<<20, 512)
			a, err := New(Config{Level: Raid6, ChunkSize: chunk, StripeCacheSize: tc.cache}, devices(disks))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(6, 6))
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			var log bioLog
			var plugs [2]blk.Plug
			plugs[0].Start()
			plugs[1].Start()
			for i, o := range tc.ops {
				var data []byte
				if o.data {
					data = fill(rng, int(o.n))
					copy(oracle[o.off:], data)
				}
				blk.SubmitBio(&plugs[o.plug], a, log.bio(blk.OpWrite, o.off>>blk.SectorShift, data, uint32(o.n), uint64(i)))
				assert.Equal(t, o.wantEnd, log.completed(), "bios completed after op %d", i)
			}
			require.NoError(t, plugs[1].Finish())
			require.NoError(t, plugs[0].Finish())
			log.checkOnce(t)
			assert.Equal(t, tc.wantStripes, a.Stats().Stripes)
			assert.Equal(t, uint64(len(tc.ops)), a.Stats().StripeAttach)
			checkMembers(t, a, disks, oracle)
		})
	}
}

// TestConcurrentPlugged runs one writer per data unit of a six-disk raid6's
// rows, each on its own goroutine with its own plug, each writing its chunk
// of every row twice over in 512-byte bios and finishing its plug every few
// dozen bios: every stripe is written by all four plugs at once, so stripes
// waiting in one plug are handled by another, and with the smallest cache the
// writers also take each other's stripes to free one. Run under -race.
func TestConcurrentPlugged(t *testing.T) {
	const (
		members = 6
		writers = members - 2
		chunk   = 16 << 10
		rows    = 8
		bs      = 512
	)
	for _, cache := range []int{0, MinStripeCacheSize} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			disks := newDisks(t, members, 1<<20, 512)
			a, err := New(Config{Level: Raid6, ChunkSize: chunk, StripeCacheSize: cache}, devices(disks))
			require.NoError(t, err)
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			var log bioLog
			var wg sync.WaitGroup
			for g := range writers {
				// Each writer's two passes, prepared before the writers start.
				rng := rand.New(rand.NewPCG(uint64(g), 12))
				var passes [2][]byte
				for i := range passes {
					passes[i] = fill(rng, rows*chunk)
				}
				for row := range rows {
					off := (row*writers + g) * chunk
					copy(oracle[off:off+chunk], passes[1][row*chunk:])
				}
				wg.Go(func() {
					var plug blk.Plug
					plug.Start()
					n := 0
					for _, pass := range passes {
						for row := range rows {
							for u := 0; u < chunk; u += bs {
								off := uint64((row*writers+g)*chunk + u)
								blk.SubmitBio(&plug, a, log.bio(blk.OpWrite, off>>blk.SectorShift, pass[row*chunk+u:][:bs], 0, off/4096))
								if n++; n%48 == 0 {
									_ = plug.Finish()
									plug.Start()
								}
							}
						}
					}
					_ = plug.Finish()
				})
			}
			wg.Wait()
			log.checkOnce(t)
			assert.Zero(t, stripesInUse(a))
			st := a.Stats()
			assert.Equal(t, uint64(2*writers*rows*chunk/bs), st.BiosIn)
			assert.Equal(t, st.BiosIn, st.StripeAttach)
			checkMembers(t, a, disks, oracle)
		})
	}
}

// TestPluggedAllocs checks that plugged RAID6 writes allocate nothing once the
// stripe cache, the plug and the array's free lists have warmed up: sixteen
// 512-byte bios of one stripe, with and without data.
func TestPluggedAllocs(t *testing.T) {
	for _, data := range []bool{false, true} {
		t.Run(fmt.Sprintf("data=%t", data), func(t *testing.T) {
			const chunk = 64 << 10
			a, _ := newArray(t, Raid6, 4, 1<<20, chunk)
			var bios [16]blk.Bio
			var buf []byte
			if data {
				buf = make([]byte, 16*512)
			}
			endIO := func(*blk.Bio) {}
			var plug blk.Plug
			cycle := func() {
				plug.Start()
				for i := range bios {
					b := &bios[i]
					off := uint64(i%8*512 + i/8*chunk)
					b.Reset(blk.OpWrite, off>>blk.SectorShift)
					var seg []byte
					if data {
						seg = buf[i*512 : (i+1)*512]
					}
					b.AddVec(seg, 512)
					b.EndIO = endIO
					blk.SubmitBio(&plug, a, b)
				}
				_ = plug.Finish()
			}
			cycle()
			require.Equal(t, uint64(1), a.Stats().FullStripeWrites)
			assert.Zero(t, testing.AllocsPerRun(20, cycle))
			assert.Equal(t, uint64(1+1+20), a.Stats().FullStripeWrites, "AllocsPerRun runs the cycle once more first")
		})
	}
}
