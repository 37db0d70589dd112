package lru

import (
	"math"
	"unsafe"

	"github.com/bhsim/bhsim/internal/conc"
)

// falseSharingRange is the distance kept between two CPUs' hot data: two 64-byte
// cache lines, because x86's adjacent-line prefetcher moves lines in pairs.
const falseSharingRange = 128

// slot is one LRU slot: the key the lookup compares and the entry it returns.
// The kernel stores only the buffer_head pointer and reads the key (b_bdev,
// b_blocknr, b_size) through it; a generic LRU keeps the key beside the entry.
type slot[K comparable, E comparable] struct {
	key K
	e   E
}

// cpuState is the fixed-size part of one CPU's LRU, guarded by lock.
//
// lock stands for bh_lru_lock: in the kernel, local_irq_disable on SMP
// (preempt_disable on UP), a few cycles that also exclude the invalidation IPI,
// whose handler runs with interrupts off on the CPU it targets. A simulated CPU
// is driven by one goroutine but may be invalidated from any other, so the model
// needs a real lock, and takes the project's cheapest: an uncontended
// compare-and-swap to acquire and a swap to release.
type cpuState struct {
	lock     conc.SpinLock
	isolated bool // cpu_is_isolated (6.6+): lookups miss, installs are skipped
	n        int  // occupied slots; they are always slots[0:n]
}

// cpuFieldsSize is the size of cpuLRU without its padding. A slice header has
// the same size whatever its element type, so []byte stands for []slot[K, E].
const cpuFieldsSize = unsafe.Sizeof(cpuState{}) + unsafe.Sizeof([]byte(nil))

// cpuLRU is one CPU's struct bh_lru. It is padded to a multiple of
// falseSharingRange bytes so that CPUs stored side by side in a slice never
// share the cache lines of their locks and counts.
type cpuLRU[K comparable, E comparable] struct {
	cpuState
	slots []slot[K, E] // len = the LRU size; slot 0 is the most recently used
	_     [(falseSharingRange - cpuFieldsSize%falseSharingRange) % falseSharingRange]byte
}

// newCPULRUs allocates the per-CPU LRUs of a cache. All CPUs' slots live in one
// backing array in which each CPU's run of size slots is followed by at least
// falseSharingRange bytes of unused slots, for the same reason as the padding of
// cpuLRU. New has checked that cpus*stride slots fit in maxSlotBytes.
func newCPULRUs[K comparable, E comparable](cpus, size, stride int) []cpuLRU[K, E] {
	all := make([]slot[K, E], cpus*stride)
	lrus := make([]cpuLRU[K, E], cpus)
	for i := range lrus {
		lrus[i].slots = all[i*stride : i*stride+size : i*stride+size]
	}
	return lrus
}

// padSlots returns how many unused slots separate two CPUs' runs of slots, given
// the size in bytes of one slot: enough to cover falseSharingRange bytes.
func padSlots(slotBytes uintptr) int {
	if slotBytes == 0 {
		return 0
	}
	return int((falseSharingRange + slotBytes - 1) / slotBytes)
}

// maxSlotBytes bounds the slot array New allocates, below the runtime's limit on
// a single allocation (2^48 bytes on 64-bit platforms, the int range on 32-bit).
const maxSlotBytes = min(math.MaxInt, 1<<47)
