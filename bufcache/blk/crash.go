package blk

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// PowerLog records what a power cut would leave on disk. Queues made with
// [PowerLog.NewQueue] report every request they dispatch to the log, in
// dispatch order, across all of them; for a write, the log keeps the bytes the
// request put on its disk. A cut after the first k write requests — a request
// boundary — is then replayed by [PowerLog.CutAt]: fresh disks holding what
// each disk held when its queue was made, plus exactly the write requests
// dispatched before the cut, each whole. Nothing after the cut reached a disk;
// the page cache above is gone too, so a test opens a fresh bufcache machine on
// the surviving disks. Reads change no disk: a cut between two reads is the cut
// after the write before them, so cut points are counted in writes.
//
// One recorded run gives every cut point, so a test can enumerate all of them
// (k = 0 … Writes()) or pick a seeded random one ([PowerLog.RandomCut]).
//
// A Queue dispatches synchronously and completes a request's bios right after
// its data reached the disk, so "dispatched" is "completed" here: the device
// keeps exactly the requests completed before the cut. The model promises
// whole requests, not more: a request that carried several bios survives with
// all of them or none, and a bio split into several requests at the queue's
// limits can survive in part (a real disk promises less — only single sectors
// are atomic — and a write cache may reorder what it makes durable; see
// [PowerLog.CutPerDisk] for member disks that each keep their own prefix).
//
// How it hooks in: the queue's Model is wrapped, and the wrapper is called
// once per dispatched request, after the request's data reached the disk, with
// the request's operation and sectors (the wrapper prices the request with the
// given model, so busy times and traces are unchanged). The data recorded is
// what the disk holds in those sectors at that moment, so requests of one
// queue dispatched concurrently from several goroutines to overlapping sectors
// may be recorded with each other's bytes: record single-goroutine runs.
// Memory grows with the bytes written while recording. A PowerLog is safe for
// concurrent use.
type PowerLog struct {
	mu     sync.Mutex
	disks  []*powerDisk
	writes []PowerWrite
	reads  uint64
}

// powerDisk is one recorded queue's disk and what it held when recording
// began.
type powerDisk struct {
	store *MemDisk
	base  map[uint64]*[1 << chunkShift]byte
}

// PowerWrite is one recorded write request.
type PowerWrite struct {
	// Disk is the index of the request's queue, in the order NewQueue made
	// them; Name is its name.
	Disk int
	Name string
	// Sector and Sectors are the request's range on its disk.
	Sector, Sectors uint64
	// Data is what the request left in those sectors (zeros for
	// metadata-only bios on a fresh disk). It belongs to the log: read it, do
	// not change it.
	Data []byte
}

// NewPowerLog returns an empty log.
func NewPowerLog() *PowerLog { return &PowerLog{} }

// NewQueue is NewQueue(name, store, model, lim) with the queue's requests
// recorded in l. What store holds now is the state a cut before the first
// recorded write leaves. Errors: those of NewQueue. O(chunks stored).
func (l *PowerLog) NewQueue(name string, store *MemDisk, model Model, lim Limits) (*Queue, error) {
	if model == nil {
		return NewQueue(name, store, model, lim) // NewQueue's error
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pm := &powerModel{log: l, disk: len(l.disks), store: store, inner: model}
	q, err := NewQueue(name, store, pm, lim)
	if err != nil {
		return nil, err
	}
	pm.name = q.Name()
	l.disks = append(l.disks, &powerDisk{store: store, base: store.snapshot()})
	return q, nil
}

// snapshot returns a copy of the disk's store.
func (d *MemDisk) snapshot() map[uint64]*[1 << chunkShift]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[uint64]*[1 << chunkShift]byte, len(d.chunks))
	for i, c := range d.chunks {
		cc := *c
		out[i] = &cc
	}
	return out
}

// powerModel is the Model a recorded queue uses: it records each request it
// prices, then prices it with the queue's own model.
type powerModel struct {
	log   *PowerLog
	disk  int
	name  string
	store *MemDisk
	inner Model
}

// Service implements Model: record the request, then price it.
func (m *powerModel) Service(prevEnd uint64, havePrev bool, op Op, sector, sectors uint64) float64 {
	m.log.record(m, op, sector, sectors)
	return m.inner.Service(prevEnd, havePrev, op, sector, sectors)
}

// Streams implements StreamModel with the inner model's stream count.
func (m *powerModel) Streams() int { return streamsOf(m.inner) }

// Rotational reports whether the recorded queue's own model is a rotating
// disk's.
func (m *powerModel) Rotational() bool { return rotational(m.inner) }

// Validate checks the inner model, if it can be checked.
func (m *powerModel) Validate() error {
	if v, ok := m.inner.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// record logs one dispatched request of m's queue; for a write, with the bytes
// its disk now holds in the request's sectors.
func (l *PowerLog) record(m *powerModel, op Op, sector, sectors uint64) {
	if op != OpWrite {
		l.mu.Lock()
		l.reads++
		l.mu.Unlock()
		return
	}
	data := make([]byte, sectors<<SectorShift)
	m.store.mu.Lock()
	m.store.copyLocked(OpRead, sector<<SectorShift, data)
	m.store.mu.Unlock()
	l.mu.Lock()
	l.writes = append(l.writes, PowerWrite{Disk: m.disk, Name: m.name, Sector: sector, Sectors: sectors, Data: data})
	l.mu.Unlock()
}

// Writes returns the number of write requests recorded: the cut points are 0
// to Writes(). O(1).
func (l *PowerLog) Writes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.writes)
}

// Reads returns the number of read requests the recorded queues dispatched.
// O(1).
func (l *PowerLog) Reads() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads
}

// Requests returns the recorded write requests in dispatch order. The slice
// is a copy; the Data it points to belongs to the log. O(writes).
func (l *PowerLog) Requests() []PowerWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]PowerWrite(nil), l.writes...)
}

// RandomCut returns a cut point drawn uniformly from 0 to Writes() by a
// generator seeded with seed: the same seed and the same recorded run give
// the same point. O(1).
func (l *PowerLog) RandomCut(seed uint64) int {
	r := rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909))
	return r.IntN(l.Writes() + 1)
}

// CutAt returns what the power cut after the first k recorded write requests
// leaves: one fresh MemDisk per recorded queue, in the order NewQueue made
// them, with that queue's disk's name, size and logical block size, holding
// what the disk held when its queue was made plus every write request among
// the first k, applied whole, in order. Errors: ErrNoCutPoint unless
// 0 ≤ k ≤ Writes(). O(bytes stored and replayed).
func (l *PowerLog) CutAt(k int) ([]*MemDisk, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k < 0 || k > len(l.writes) {
		return nil, fmt.Errorf("%w: cut after %d of %d write requests", ErrNoCutPoint, k, len(l.writes))
	}
	keep := make([]int, len(l.disks))
	for _, w := range l.writes[:k] {
		keep[w.Disk]++
	}
	return l.replayLocked(keep), nil
}

// CutPerDisk returns what a power cut leaves when each recorded disk keeps its
// own first keep[i] write requests (in that disk's dispatch order), whatever
// the others kept: the cut of independent disks, each of which may have made
// more or less of its queue durable — the members of an md array. CutAt(k) is
// the special case where the kept requests form a prefix of the global order.
// Errors: ErrNoCutPoint unless keep has one entry per recorded queue, each
// between 0 and that disk's recorded writes. O(bytes stored and replayed).
func (l *PowerLog) CutPerDisk(keep []int) ([]*MemDisk, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(keep) != len(l.disks) {
		return nil, fmt.Errorf("%w: %d counts for %d disks", ErrNoCutPoint, len(keep), len(l.disks))
	}
	have := make([]int, len(l.disks))
	for _, w := range l.writes {
		have[w.Disk]++
	}
	for i, k := range keep {
		if k < 0 || k > have[i] {
			return nil, fmt.Errorf("%w: disk %d keeps %d of %d write requests", ErrNoCutPoint, i, k, have[i])
		}
	}
	return l.replayLocked(keep), nil
}

// replayLocked builds each disk i from its base and its first keep[i] write
// requests. l.mu is held.
func (l *PowerLog) replayLocked(keep []int) []*MemDisk {
	out := make([]*MemDisk, len(l.disks))
	for i, pd := range l.disks {
		s := pd.store
		out[i] = &MemDisk{name: s.name, sectors: s.sectors, lbs: s.lbs, chunks: make(map[uint64]*[1 << chunkShift]byte, len(pd.base))}
		for j, c := range pd.base {
			cc := *c
			out[i].chunks[j] = &cc
		}
	}
	left := append([]int(nil), keep...)
	for _, w := range l.writes {
		if left[w.Disk] == 0 {
			continue
		}
		left[w.Disk]--
		out[w.Disk].copyLocked(OpWrite, w.Sector<<SectorShift, w.Data) // not yet shared: no lock needed
	}
	return out
}
