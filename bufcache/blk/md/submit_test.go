package md

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// deferDisk wraps a MemDisk and holds every bio until flush, as a member whose
// completions arrive after Submit returns (a plugged queue, an interrupt).
type deferDisk struct {
	*blk.MemDisk
	held []*blk.Bio
}

// Submit implements blk.Device.
func (d *deferDisk) Submit(b *blk.Bio) { d.held = append(d.held, b) }

// flushAll serves the held bios of every disk, and the bios their completions
// submit, until none is held. It returns the number served.
func flushAll(disks []*deferDisk) int {
	served := 0
	for again := true; again; {
		again = false
		for _, d := range disks {
			for len(d.held) > 0 {
				b := d.held[0]
				d.held = d.held[1:]
				d.MemDisk.Submit(b)
				served++
				again = true
			}
		}
	}
	return served
}

// TestDeferredCompletion checks that a bio whose member bios complete after
// Submit returned completes once, after the last of them, with its data stored
// correctly; RAID6 writes run their pre-read and write rounds from the
// completions.
func TestDeferredCompletion(t *testing.T) {
	for _, level := range allLevels {
		t.Run("level="+level.String(), func(t *testing.T) {
			mem := newDisks(t, 4, 1<<20, 512)
			disks := make([]*deferDisk, len(mem))
			for i, m := range mem {
				disks[i] = &deferDisk{MemDisk: m}
			}
			a, err := New(Config{Level: level, ChunkSize: 16 << 10}, devices(disks))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(3, 3))
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			submit := func(op blk.Op, off uint64, buf []byte) {
				var b blk.Bio
				b.Reset(op, off>>blk.SectorShift)
				b.AddVec(buf, uint32(len(buf)))
				calls := 0
				b.EndIO = func(*blk.Bio) { calls++ }
				a.Submit(&b)
				assert.Zero(t, calls, "completed before its member bios")
				assert.NotZero(t, flushAll(disks))
				assert.Equal(t, 1, calls)
				assert.NoError(t, b.Err)
			}
			for range 40 {
				off := rng.Uint64N(uint64(len(oracle))>>9) << 9
				buf := fill(rng, int(min(uint64(len(oracle))-off, (1+rng.Uint64N(96))<<9)))
				submit(blk.OpWrite, off, buf)
				copy(oracle[off:], buf)
			}
			got := make([]byte, len(oracle))
			submit(blk.OpRead, 0, got)
			assert.Equal(t, oracle, got)
			checkMembers(t, a, mem, oracle)
		})
	}
}

// TestConcurrentWriters runs one writer per data chunk of a stripe row, each
// on its own goroutine. In each step every writer rewrites the same 4 KiB unit
// of its own chunk with new data, all released at once, so on RAID6 each stripe is updated
// from several goroutines at the same time. Then the members are checked
// against the oracle. Run under -race.
func TestConcurrentWriters(t *testing.T) {
	const (
		members = 6
		writers = members - 2
		chunk   = 16 << 10
		rows    = 16
		steps   = 2 * rows * chunk / 4096 // every unit of the first rows, twice
	)
	for _, level := range allLevels {
		t.Run("level="+level.String(), func(t *testing.T) {
			a, disks := newArray(t, level, members, 1<<20, chunk)
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			var start [steps]chan struct{}
			for i := range start {
				start[i] = make(chan struct{})
			}
			var done sync.WaitGroup
			for g := range writers {
				go func() {
					rng := rand.New(rand.NewPCG(uint64(g), 11))
					var b blk.Bio
					for step := range steps {
						<-start[step]
						row, unit := step/(chunk/4096)%rows, step%(chunk/4096)
						off := (row*writers+g)*chunk + unit*4096
						copy(oracle[off:], fill(rng, 4096))
						b.Reset(blk.OpWrite, uint64(off)>>blk.SectorShift)
						b.AddVec(oracle[off:off+4096], 4096)
						b.EndIO = func(*blk.Bio) {}
						a.Submit(&b)
						assert.NoError(t, b.Err)
						done.Done()
					}
				}()
			}
			for step := range steps {
				done.Add(writers)
				close(start[step])
				done.Wait()
			}
			checkMembers(t, a, disks, oracle)
			assert.Equal(t, uint64(writers*steps), a.Stats().BiosIn)
		})
	}
}

// TestSubmitAllocs checks that Submit allocates nothing once warmed up, on every
// level, for small and large bios, with and without data.
func TestSubmitAllocs(t *testing.T) {
	for _, level := range allLevels {
		for _, size := range []uint32{4096, 1 << 20} {
			for _, data := range []bool{false, true} {
				t.Run(fmt.Sprintf("level=%s/size=%d/data=%t", level, size, data), func(t *testing.T) {
					a, _ := newArray(t, level, 4, 4<<20, 64<<10)
					var buf []byte
					if data {
						buf = make([]byte, size)
					}
					var b blk.Bio
					endIO := func(*blk.Bio) {}
					for _, op := range []blk.Op{blk.OpWrite, blk.OpRead} {
						submit := func() {
							b.Reset(op, 8)
							b.AddVec(buf, size)
							b.EndIO = endIO
							a.Submit(&b)
						}
						submit()
						require.NoError(t, b.Err)
						assert.Zero(t, testing.AllocsPerRun(20, submit), "%s", op)
					}
				})
			}
		}
	}
}

// gateDisk wraps a MemDisk and holds the bios submitted to it until open; from
// then on it serves them at once. It is safe for concurrent use.
type gateDisk struct {
	*blk.MemDisk
	mu     sync.Mutex
	opened bool
	held   []*blk.Bio
}

// Submit implements blk.Device.
func (d *gateDisk) Submit(b *blk.Bio) {
	d.mu.Lock()
	if !d.opened {
		d.held = append(d.held, b)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.MemDisk.Submit(b)
}

// open serves the held bios and lets later ones through.
func (d *gateDisk) open() {
	d.mu.Lock()
	held := d.held
	d.held, d.opened = nil, true
	d.mu.Unlock()
	for _, b := range held {
		d.MemDisk.Submit(b)
	}
}

// heldBios returns the number of bios the gates of disks hold.
func heldBios(disks []*gateDisk) int {
	n := 0
	for _, d := range disks {
		d.mu.Lock()
		n += len(d.held)
		d.mu.Unlock()
	}
	return n
}

// TestStripeWaits: unplugged RAID6 writes that need a stripe_head another
// write's handling holds, while the members hold every bio until the main
// goroutine opens them. A writer that needs a stripe being handled first
// hands its own attached stripes to the handler, then waits; a writer that
// finds no free stripe_head waits. Both go on once the members complete.
func TestStripeWaits(t *testing.T) {
	const chunk = 64 << 10
	tests := []struct {
		name        string
		first       [2]uint64 // the writes' array byte ranges
		second      [2]uint64
		wantHeld    int  // bios held once the second writer waits
		settle      bool // the second writer's wait cannot be observed: give it time
		wantStripes uint64
	}{
		// The first write reconstruct-writes stripe (0,1): one pre-read held.
		// The second attaches to (0,0), finds (0,1) being handled, handles
		// (0,0) (one pre-read held) and waits.
		{"stripe being handled", [2]uint64{4096, 8192}, [2]uint64{0, 8192}, 2, false, 3},
		// The first write holds all 17 stripe_heads: row 0 written whole (64
		// bios held) and row 1's first unit pre-reading (1 held). The second
		// finds none free.
		{"no free stripe_head", [2]uint64{0, 2*chunk + 4096}, [2]uint64{2*chunk + 4096, 2*chunk + 8192}, 65, true, 18},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := newDisks(t, 4, 1<<20, 512)
			disks := make([]*gateDisk, len(mem))
			for i, m := range mem {
				disks[i] = &gateDisk{MemDisk: m}
			}
			a, err := New(Config{Level: Raid6, ChunkSize: chunk, StripeCacheSize: MinStripeCacheSize}, devices(disks))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(8, 8))
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			var log bioLog
			write := func(r [2]uint64) *blk.Bio {
				data := fill(rng, int(r[1]-r[0]))
				copy(oracle[r[0]:], data)
				return log.bio(blk.OpWrite, r[0]>>blk.SectorShift, data, 0, r[0]/4096)
			}
			a.Submit(write(tc.first))
			require.Zero(t, log.completed(), "the members hold the first write")
			second := write(tc.second)
			done := make(chan struct{})
			go func() {
				a.Submit(second)
				close(done)
			}()
			for deadline := time.Now().Add(10 * time.Second); heldBios(disks) < tc.wantHeld; runtime.Gosched() {
				require.True(t, time.Now().Before(deadline), "held bios: %d", heldBios(disks))
			}
			if tc.settle {
				time.Sleep(20 * time.Millisecond)
			}
			select {
			case <-done:
				t.Fatal("the second writer did not wait")
			default:
			}
			assert.Equal(t, tc.wantHeld, heldBios(disks))
			for _, d := range disks {
				d.open()
			}
			<-done
			log.checkOnce(t)
			assert.Equal(t, tc.wantStripes, a.Stats().Stripes)
			assert.Zero(t, stripesInUse(a))
			checkMembers(t, a, mem, oracle)
		})
	}
}

// An empty preflush bio completes at once on every level, sends nothing to
// the members and is not counted.
func TestFlushCompletesAtOnce(t *testing.T) {
	for _, level := range []Level{Raid0, Raid10Near2, Raid10Far2, Raid6} {
		t.Run(level.String(), func(t *testing.T) {
			a, queues, _ := newQueueArray(t, level, 4, 1<<20, 64<<10, 0)
			for _, plugged := range []bool{false, true} {
				var p blk.Plug
				if plugged {
					p.Start()
				}
				var b blk.Bio
				b.Reset(blk.OpWrite, 0)
				b.Flags = blk.FlagPreflush | blk.FlagSync
				done := 0
				b.EndIO = func(b *blk.Bio) {
					done++
					assert.NoError(t, b.Err)
				}
				blk.SubmitBio(&p, a, &b)
				assert.Equal(t, 1, done, "plugged %v", plugged)
				if plugged {
					require.NoError(t, p.Finish())
				}
			}
			assert.Equal(t, memberIO{}, servedBy(queues))
			assert.Equal(t, Stats{}, a.Stats())
		})
	}
}
