package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bhsim/bhsim/internal/pageindex"
)

// fuzz618DevSize is FuzzOps618's device: eight blocks of 64 KiB.
const fuzz618DevSize = 512 << 10

// fuzzOp618 decodes one FuzzOps618 operation: FuzzOps' operations on the
// larger device, with set_blocksize choosing every size from 512 to 64 KiB,
// some lookups through __find_get_block_nonatomic and the slow path, and
// some BLKZEROOUT truncations (splitting large folios).
func fuzzOp618(op, a, b byte, bsize uint32) rigOp {
	o := fuzzOpOn(fuzz618DevSize, 8, op, a, b, bsize)
	switch {
	case o.kind == opGetblk && op/13%4 == 3: // a lookup instead of a getblk
		o.kind = []opKind{opFind, opFindSlow, opFindNonatomic}[b%3]
	case o.kind == opInvalidate && op/13%2 == 1: // a BLKZEROOUT instead
		o = rigOp{kind: opZeroout, pos: (uint64(a)<<8 | uint64(b)) * 29 % fuzz618DevSize, n: uint64(b) * 301}
	}
	return o
}

// FuzzOps618 is FuzzOps on the 6.15–6.18 variants (Linux618): block sizes
// 512 to 64 KiB, large folios from readahead and v6.18's windows, the v6.16
// sleeping lookups, against the flat byte-array oracle — after every sync
// the disk holds exactly what was written, every read returns it, and the
// invariant checker (folio orders and alignment, rings of folio_size/b_size
// buffers, block numbers from folio_pos) holds after every operation.
func FuzzOps618(f *testing.F) {
	f.Add([]byte{7, 7, 0, 1, 3, 0, 2, 0, 7, 4, 0, 0, 8, 0, 0}, false)                // 64 KiB blocks
	f.Add([]byte{7, 2, 0, 10, 9, 200, 12, 0, 250, 11, 3, 40, 8, 0, 0}, true)         // 2 KiB, writes and reads
	f.Add([]byte{12, 0, 255, 12, 1, 255, 7, 5, 0, 0, 4, 0, 2, 0, 9, 8, 0, 0}, false) // read ahead, then 16 KiB blocks
	f.Fuzz(func(t *testing.T, ops []byte, btree bool) {
		cfg := Linux618(Config{CPUs: 1, Check: true, DirtyLimit: 4})
		if btree {
			cfg.Index = pageindex.KindBTree
		}
		runFuzzOps(t, cfg, fuzz618DevSize, ops, fuzzOp618)
	})
}

// TestFuzzOps618ReachesEveryOperation: the decoder reaches every operation,
// the three lookups included, and every block size.
func TestFuzzOps618ReachesEveryOperation(t *testing.T) {
	seen := map[opKind]int{}
	sizes := map[uint32]bool{}
	for op := range 256 {
		for b := range 3 {
			o := fuzzOp618(byte(op), byte(op), byte(b), 512)
			seen[o.kind]++
			if o.kind == opSetBlocksize {
				sizes[o.size] = true
			}
		}
	}
	assert.Len(t, seen, 16, "every operation but iov_iter")
	assert.Len(t, sizes, 8, "512 to 64 KiB")
}
