package bufcache

import "sync/atomic"

// errseq models errseq_t (lib/errseq.c, v4.13+): a 32-bit value holding the
// last error's errno in its low bits, a "seen" flag and a counter above. A
// writer records an error with set; every reader keeps its own sample (a
// file's f_wb_err) and learns of each error recorded after its sample once,
// whoever else saw it. The counter moves only when an error is recorded
// after one was seen, so an error nobody has seen yet is not recorded twice.
type errseq struct{ v atomic.Uint32 }

// The fields of an errseq_t value.
const (
	errseqErrnoMask = 1<<12 - 1                 // MAX_ERRNO
	errseqSeen      = 1 << 12                   // ERRSEQ_SEEN
	errseqCtrInc    = 1 << 13                   // ERRSEQ_CTR_INC
	errseqKeep      = ^uint32(errseqCtrInc - 1) // the counter bits
)

// set models errseq_set(eseq, -errno): record an error. If the current error
// was seen, the counter advances (every sampler learns of the new one); if it
// was not, only the errno is replaced. It returns the new value.
func (e *errseq) set(errno uint32) uint32 {
	for {
		old := e.v.Load()
		next := old&errseqKeep | errno&errseqErrnoMask
		if old&errseqSeen != 0 {
			next += errseqCtrInc
		}
		if next == old || e.v.CompareAndSwap(old, next) {
			return next
		}
	}
}

// sample models errseq_sample: the value a new reader starts from. An error
// nobody has seen yet samples as 0, so the new reader will report it too.
func (e *errseq) sample() uint32 {
	old := e.v.Load()
	if old&errseqSeen == 0 {
		return 0
	}
	return old
}

// checkAndAdvance models errseq_check_and_advance: if an error was recorded
// after *since, mark it seen, move *since to it and return its errno; else 0.
// moved reports whether *since changed.
func (e *errseq) checkAndAdvance(since *uint32) (errno uint32, moved bool) {
	old := e.v.Load()
	if old == *since {
		return 0, false
	}
	next := old | errseqSeen
	if next != old {
		e.v.CompareAndSwap(old, next) // lost to a new error: *since stays behind it, which is reported next
	}
	*since = next
	return next & errseqErrnoMask, true
}
