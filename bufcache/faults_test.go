package bufcache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// faultStack is a device opened over a FaultyDevice over a MemDisk, with a
// Queue between them or not.
type faultStack struct {
	m    *Machine
	d    *BlockDevice
	fd   *blk.FaultyDevice
	mem  *blk.MemDisk
	size uint64
}

// newFaultStack opens a size-byte disk with 512-byte logical blocks whose
// every byte holds old[i] (written before the machine sees it), through a
// FaultyDevice seeded with seed — over a Queue if queued — and sets the block
// size to bs. The machine runs the invariant checker.
func newFaultStack(t testing.TB, size uint64, bs uint32, queued bool, seed uint64, old []byte) *faultStack {
	t.Helper()
	mem, err := blk.NewMemDisk("sda", size, 512)
	require.NoError(t, err)
	var b blk.Bio
	b.Reset(blk.OpWrite, 0)
	b.AddVec(old, uint32(size))
	b.EndIO = func(*blk.Bio) {}
	mem.Submit(&b)
	require.NoError(t, b.Err)
	var under blk.Device = mem
	if queued {
		under, err = blk.NewQueue("", mem, blk.Null{}, blk.DefaultLimits(512, 4096))
		require.NoError(t, err)
	}
	fd, err := blk.NewFaultyDevice(under, seed)
	require.NoError(t, err)
	m, err := NewMachine(Config{Check: true})
	require.NoError(t, err)
	d, err := m.Open(fd, DeviceOptions{})
	require.NoError(t, err)
	require.NoError(t, d.SetBlocksize(m.CPU(0), bs))
	return &faultStack{m: m, d: d, fd: fd, mem: mem, size: size}
}

// disk returns what the MemDisk holds.
func (s *faultStack) disk(t testing.TB) []byte {
	t.Helper()
	p := make([]byte, s.size)
	_, err := s.mem.ReadAt(p, 0)
	require.NoError(t, err)
	return p
}

// lostBlocks returns the blocks of size bs that the write faults since fault
// number from cover, sorted.
func lostBlocks(fd *blk.FaultyDevice, from int, bs uint32) []uint64 {
	var out []uint64
	for _, f := range fd.Faults()[from:] {
		if f.Op != blk.OpWrite {
			continue
		}
		spb := uint64(bs) >> blk.SectorShift
		for b := f.Sector / spb; b < (f.Sector+f.Sectors+spb-1)/spb; b++ {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// randomBytes returns n bytes from a generator seeded with seed.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// diffBytes returns "" if want and got are equal, else where they first differ.
func diffBytes(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("byte %d is %#x, want %#x", i, got[i], want[i])
		}
	}
	return ""
}

// TestFaultWritebackLost injects write failures into writeback — a bad sector
// range, the nth write bio, writes failing at a seeded random rate — for 4 KiB
// and 512-byte blocks, over a plain disk and over a request queue, and checks
// what the model promises (end_buffer_async_write, mapping_set_error):
//
//   - reported lost: the next SyncBlockdev returns ErrIO, the one after nil;
//     exactly the buffers whose bios failed have BH_Write_EIO and have lost
//     BH_Uptodate; none stays dirty; the device counted one warning per lost
//     write ("lost async page write");
//   - still correct: the disk holds the new data everywhere else and the old
//     data in the lost blocks (the oracle: flat arrays of both);
//   - read(2) still returns the new data from the page cache (the folio stays
//     uptodate), while Bread of a lost block, no longer uptodate, reads the
//     disk again and returns the old data — after which read(2) agrees.
func TestFaultWritebackLost(t *testing.T) {
	const size = 128 << 10
	const written = 64 << 10 // bytes [0, written) are rewritten
	for _, bs := range []uint32{4096, 512} {
		for _, queued := range []bool{false, true} {
			for _, rule := range []struct {
				name string
				set  func(*blk.FaultyDevice) error
			}{
				{"sectors", func(f *blk.FaultyDevice) error { return f.FailSectors(blk.OpWrite, 17, 25) }},
				{"nth", func(f *blk.FaultyDevice) error { return f.FailNth(blk.OpWrite, 5) }},
				{"random", func(f *blk.FaultyDevice) error { return f.FailRate(blk.OpWrite, 0.25) }},
			} {
				t.Run(fmt.Sprintf("bs=%d/queued=%t/%s", bs, queued, rule.name), func(t *testing.T) {
					seed := uint64(bs) + 3
					t.Logf("fault seed %d", seed)
					old := randomBytes(1, size)
					s := newFaultStack(t, size, bs, queued, seed, old)
					cpu := s.m.CPU(0)
					app := slices.Clone(old)
					copy(app, randomBytes(2, written))
					_, err := s.d.Write(cpu, 0, userIter(t, app[:written]))
					require.NoError(t, err)
					require.NoError(t, rule.set(s.fd))
					warnings := cpu.Events()[EvWarning]

					err = s.d.SyncBlockdev(cpu)
					lost := lostBlocks(s.fd, 0, bs)
					require.NotEmpty(t, lost, "the rule failed some writes")
					assert.ErrorIs(t, err, ErrIO, "reported at the sync")
					assert.NoError(t, s.d.SyncBlockdev(cpu), "and only once")
					assert.Equal(t, warnings+uint64(len(lost)), cpu.Events()[EvWarning])

					want := slices.Clone(app)
					for _, b := range lost {
						o := b * uint64(bs)
						copy(want[o:o+uint64(bs)], old[o:])
					}
					assert.Empty(t, diffBytes(want, s.disk(t)), "the disk: new data except the lost blocks")
					for b := range uint64(written / bs) {
						bh := s.d.FindGetBlock(cpu, b, bs)
						require.NotNil(t, bh, "block %d cached", b)
						isLost := slices.Contains(lost, b)
						assert.Equal(t, isLost, bh.Has(BHWriteEIO), "block %d Write_EIO", b)
						assert.Equal(t, !isLost, bh.Has(BHUptodate), "block %d uptodate", b)
						assert.False(t, bh.Has(BHDirty), "block %d dirty", b)
						Brelse(cpu, bh)
					}
					got := make([]byte, written)
					_, err = s.d.Read(cpu, 0, got)
					require.NoError(t, err)
					assert.Empty(t, diffBytes(app[:written], got), "read(2) returns the page cache")

					bh, err := s.d.Bread(cpu, lost[0], bs)
					require.NoError(t, err)
					o := lost[0] * uint64(bs)
					assert.Equal(t, old[o:o+uint64(bs)], bh.Data(), "bread re-reads the disk")
					Brelse(cpu, bh)
					_, err = s.d.Read(cpu, o, got[:bs])
					require.NoError(t, err)
					assert.Equal(t, old[o:o+uint64(bs)], got[:bs], "read(2) now agrees")
					require.NoError(t, s.m.Check())
				})
			}
		}
	}
}

// TestFaultReadOnlyMidRun makes the disk read-only between two syncs: the
// first sync's data is on the disk, every write of the second is lost and
// reported once, reads still work, and once the disk is writable again the
// application's rewrite goes through.
func TestFaultReadOnlyMidRun(t *testing.T) {
	const size = 64 << 10
	for _, bs := range []uint32{4096, 512} {
		t.Run(fmt.Sprintf("bs=%d", bs), func(t *testing.T) {
			old := make([]byte, size)
			s := newFaultStack(t, size, bs, true, 1, old)
			cpu := s.m.CPU(0)
			v1, v2 := randomBytes(3, 32<<10), randomBytes(4, 32<<10)
			_, err := s.d.Write(cpu, 0, userIter(t, v1))
			require.NoError(t, err)
			require.NoError(t, s.d.SyncBlockdev(cpu))

			s.fd.SetReadOnly(true)
			_, err = s.d.Write(cpu, 16<<10, userIter(t, v2))
			require.NoError(t, err, "the page cache takes the write")
			err = s.d.SyncBlockdev(cpu)
			assert.ErrorIs(t, err, ErrIO)
			assert.NoError(t, s.d.SyncBlockdev(cpu))
			assert.Len(t, lostBlocks(s.fd, 0, bs), 32<<10/int(bs), "every block of the second write")
			for _, f := range s.fd.Faults() {
				assert.Equal(t, blk.CauseReadOnly, f.Cause)
			}
			want := slices.Concat(v1, make([]byte, 32<<10))
			assert.Empty(t, diffBytes(want, s.disk(t)), "the first sync's data, the old zeros after it")
			bh, err := s.d.Bread(cpu, 0, bs)
			require.NoError(t, err, "reads work")
			Brelse(cpu, bh)

			s.fd.SetReadOnly(false)
			_, err = s.d.Write(cpu, 16<<10, userIter(t, v2))
			require.NoError(t, err)
			require.NoError(t, s.d.SyncBlockdev(cpu))
			copy(want[16<<10:], v2)
			assert.Empty(t, diffBytes(want, s.disk(t)), "the rewrite")
			require.NoError(t, s.m.Check())
		})
	}
}

// TestFaultReadErrors checks the read side: Bread of a block whose read fails
// returns ErrIO and no buffer, and succeeds with the right data once the
// fault is gone; read(2) over a bad range returns the bytes before it and
// ErrIO; a transient failure of a readahead bio is retried page by page
// (filemap_read_folio), so read(2) returns everything.
func TestFaultReadErrors(t *testing.T) {
	const size = 256 << 10
	old := randomBytes(5, size)
	for _, bs := range []uint32{4096, 512} {
		t.Run(fmt.Sprintf("bs=%d/bread", bs), func(t *testing.T) {
			s := newFaultStack(t, size, bs, true, 1, old)
			cpu := s.m.CPU(0)
			block := uint64(8192 / bs)
			sector := block * uint64(bs) >> blk.SectorShift
			require.NoError(t, s.fd.FailSectors(blk.OpRead, sector, sector+1))
			bh, err := s.d.Bread(cpu, block, bs)
			assert.Nil(t, bh)
			assert.ErrorIs(t, err, ErrIO)
			s.fd.Heal()
			bh, err = s.d.Bread(cpu, block, bs)
			require.NoError(t, err)
			assert.Equal(t, old[8192:8192+bs], bh.Data())
			Brelse(cpu, bh)
			require.NoError(t, s.m.Check())
		})
	}
	t.Run("read(2) over a bad range", func(t *testing.T) {
		s := newFaultStack(t, size, 4096, true, 1, old)
		cpu := s.m.CPU(0)
		require.NoError(t, s.fd.FailSectors(blk.OpRead, 200, 201)) // page 25
		got := make([]byte, size)
		n, err := s.d.Read(cpu, 0, got)
		assert.ErrorIs(t, err, ErrIO)
		assert.Equal(t, uint64(25*4096), n)
		assert.Equal(t, old[:n], got[:n])
	})
	t.Run("transient readahead failure", func(t *testing.T) {
		s := newFaultStack(t, size, 4096, true, 1, old)
		cpu := s.m.CPU(0)
		require.NoError(t, s.fd.FailNth(blk.OpRead, 1))
		got := make([]byte, size)
		n, err := s.d.Read(cpu, 0, got)
		require.NoError(t, err)
		assert.Equal(t, uint64(size), n)
		assert.Empty(t, diffBytes(old, got))
		assert.Equal(t, uint64(1), s.fd.Stats().FailedReads)
	})
}

// TestFaultMDMember runs buffered writes and syncs through bufcache on md
// arrays whose member FaultyDevices die (every later bio fails) between two
// syncs, and checks the data against the oracle through a fresh machine:
// raid10 and raid6 lose nothing and report nothing (the array goes degraded,
// Failed names the dead members); raid0 reports the loss at the sync, and the
// blocks on the dead member are exactly the ones lost.
func TestFaultMDMember(t *testing.T) {
	const (
		members = 4
		mSize   = 128 << 10
		chunk   = 16 << 10
	)
	for _, tc := range []struct {
		level md.Level
		dead  []int
	}{
		{md.Raid10Near2, []int{1}},
		{md.Raid10Far2, []int{2}},
		{md.Raid6, []int{3}},
		{md.Raid6, []int{0, 2}},
		{md.Raid0, []int{1}},
	} {
		for _, bs := range []uint32{4096, 512} {
			t.Run(fmt.Sprintf("%s/dead=%v/bs=%d", tc.level, tc.dead, bs), func(t *testing.T) {
				var devs []blk.Device
				var fds []*blk.FaultyDevice
				for i := range members {
					mem, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), mSize, 512)
					require.NoError(t, err)
					q, err := blk.NewQueue("", mem, blk.Null{}, blk.DefaultLimits(512, 4096))
					require.NoError(t, err)
					fd, err := blk.NewFaultyDevice(q, uint64(i))
					require.NoError(t, err)
					devs, fds = append(devs, fd), append(fds, fd)
				}
				a, err := md.New(md.Config{Level: tc.level, ChunkSize: chunk}, devs)
				require.NoError(t, err)
				size := a.Sectors() << blk.SectorShift
				m, err := NewMachine(Config{Check: true})
				require.NoError(t, err)
				d, err := m.Open(a, DeviceOptions{})
				require.NoError(t, err)
				cpu := m.CPU(0)
				require.NoError(t, d.SetBlocksize(cpu, bs))

				v1 := randomBytes(6, int(size))
				_, err = d.Write(cpu, 0, userIter(t, v1))
				require.NoError(t, err)
				require.NoError(t, d.SyncBlockdev(cpu))
				for _, dev := range tc.dead {
					require.NoError(t, fds[dev].FailSectors(blk.OpRead, 0, fds[dev].Sectors()))
					require.NoError(t, fds[dev].FailSectors(blk.OpWrite, 0, fds[dev].Sectors()))
				}
				v2 := randomBytes(7, int(size/2))
				_, err = d.Write(cpu, size/4, userIter(t, v2))
				require.NoError(t, err)
				syncErr := d.SyncBlockdev(cpu)
				want := slices.Clone(v1)
				copy(want[size/4:], v2)
				onDead := func(off uint64) bool { // raid0: chunk c lives on member c mod n
					return slices.Contains(tc.dead, int(off/chunk%members))
				}

				fresh, err := NewMachine(Config{})
				require.NoError(t, err)
				d2, err := fresh.Open(a, DeviceOptions{})
				require.NoError(t, err)
				require.NoError(t, d2.SetBlocksize(fresh.CPU(0), bs))
				if tc.level != md.Raid0 {
					assert.NoError(t, syncErr, "redundancy: nothing lost")
					assert.Equal(t, tc.dead, a.Failed())
					got := make([]byte, size)
					_, err = d2.Read(fresh.CPU(0), 0, got)
					require.NoError(t, err)
					assert.Empty(t, diffBytes(want, got), "read back through a fresh page cache")
					return
				}
				assert.ErrorIs(t, syncErr, ErrIO, "raid0 reports the loss")
				assert.Empty(t, a.Failed())
				for off := uint64(0); off < size; off += uint64(bs) {
					bh := d.FindGetBlock(cpu, off/uint64(bs), bs)
					require.NotNil(t, bh)
					rewritten := off >= size/4 && off < size*3/4
					assert.Equal(t, rewritten && onDead(off), bh.Has(BHWriteEIO), "block at %d lost", off)
					Brelse(cpu, bh)
					got, err := d2.Bread(fresh.CPU(0), off/uint64(bs), bs)
					if onDead(off) {
						assert.ErrorIs(t, err, ErrIO, "block at %d is on the dead member", off)
						continue
					}
					require.NoError(t, err)
					assert.Equal(t, want[off:off+uint64(bs)], got.Data(), "block at %d", off)
					Brelse(fresh.CPU(0), got)
				}
			})
		}
	}
}

// FuzzFaultWriteback writes whole blocks and syncs in a fuzzed order while a
// FaultyDevice fails fuzzed write bios (the nth, a sector range, a seeded
// rate), with the invariant checker on, and checks after every sync: the sync
// reports an error exactly when a write failed since the last one, and the
// disk holds, per block, the data of its last write that was not lost (a flat
// byte array kept by the test).
func FuzzFaultWriteback(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(40), uint8(30), false, []byte{0, 4, 9, 1, 0, 0, 2, 60, 3, 1, 1, 1})
	f.Add(uint64(2), uint8(0), uint8(0), uint8(255), true, []byte{2, 0, 200, 1, 1, 1, 0, 5, 5})
	f.Fuzz(func(t *testing.T, seed uint64, nth, rangeStart, rate uint8, small bool, ops []byte) {
		const size = 64 << 10
		bs := uint32(4096)
		if small {
			bs = 512
		}
		nblocks := uint64(size / bs)
		s := newFaultStack(t, size, bs, seed%2 == 0, seed, make([]byte, size))
		cpu := s.m.CPU(0)
		if nth > 0 {
			require.NoError(t, s.fd.FailNth(blk.OpWrite, uint64(nth)))
		}
		start := uint64(rangeStart) % (size >> blk.SectorShift)
		require.NoError(t, s.fd.FailSectors(blk.OpWrite, start, start+1))
		require.NoError(t, s.fd.FailRate(blk.OpWrite, float64(rate)/1024))
		disk := make([]byte, size) // what the disk must hold
		app := make([]byte, size)  // what the page cache holds
		dirty := map[uint64]bool{}
		faults := 0
		for i := 0; i+2 < len(ops); i += 3 {
			if ops[i]%4 == 0 {
				err := s.d.SyncBlockdev(cpu)
				lost := lostBlocks(s.fd, faults, bs)
				faults = len(s.fd.Faults())
				require.Equal(t, len(lost) > 0, err != nil, "sync %d: %v", i, err)
				for b := range dirty {
					if !slices.Contains(lost, b) {
						o := b * uint64(bs)
						copy(disk[o:o+uint64(bs)], app[o:])
					}
				}
				clear(dirty)
				got := make([]byte, size)
				_, err = s.mem.ReadAt(got, 0)
				require.NoError(t, err)
				require.Empty(t, diffBytes(disk, got), "after sync %d", i)
				continue
			}
			b := uint64(ops[i+1]) % nblocks
			n := min(1+uint64(ops[i+2])%8, nblocks-b)
			data := randomBytes(uint64(i), int(n)*int(bs))
			_, err := s.d.Write(cpu, b*uint64(bs), userIter(t, data))
			require.NoError(t, err)
			copy(app[b*uint64(bs):], data)
			for j := b; j < b+n; j++ {
				dirty[j] = true
			}
		}
		require.NoError(t, s.m.Check())
	})
}
