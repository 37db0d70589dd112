package pageindex

import (
	"math"
	"testing"
)

// decodeOps turns fuzz bytes into operations. Each operation takes two bytes
// and sometimes a third: the first picks the operation, the mark
// (including the invalid NumMarks) and, in its top values, the order of a
// large entry (its index aligned down to it), the second the index class and
// its low bits:
//
//	00vvvvvv  index v (0..63)
//	01vvvvvv  index v<<8 | next byte (0..16383: the 64 and 4096 boundaries)
//	10vvvvvv  index 1<<v + next byte − 128 (powers of two up to 2^63, e.g. 2^29)
//	11vvvvvv  index MaxUint64 − v (the top of the index space)
func decodeOps(data []byte) []op {
	var ops []op
	for len(data) >= 2 {
		code, sel := data[0], data[1]
		data = data[2:]
		v := uint64(sel & 0x3f)
		var index uint64
		switch sel >> 6 {
		case 0:
			index = v
		case 1, 2:
			var b uint64
			if len(data) > 0 {
				b, data = uint64(data[0]), data[1:]
			}
			if sel>>6 == 1 {
				index = v<<8 | b
			} else {
				index = 1<<v + b - 128
			}
		case 3:
			index = math.MaxUint64 - v
		}
		o := op{
			code:  opCode(code % uint8(numOps)),
			index: index,
			mark:  Mark(code / uint8(numOps) % (uint8(NumMarks) + 1)),
		}
		if sel := code / (uint8(numOps) * (uint8(NumMarks) + 1)); sel > 0 { // a large entry, aligned
			o.order = orders[int(sel-1)%len(orders)]
			o.index &^= uint64(1)<<o.order - 1
		}
		ops = append(ops, o)
	}
	return ops
}

// FuzzIndex checks decoded operation sequences against the map oracle for
// every index configuration.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 8, 0})                             // insert 0, load 0
	f.Add([]byte{0, 0, 0, 0x9d, 128, 1, 0})               // 0 and 2^29, delete 0
	f.Add([]byte{0, 0xff, 0, 0x80 | 63, 128, 6, 0x40, 1}) // max, 2^63, next
	f.Add([]byte{0, 0x41, 0, 3, 0x41, 0, 12, 0x41, 0, 16, 0x00, 25, 0x00, 7, 0x00})
	f.Add([]byte{0, 0x10, 0, 0x50, 0, 0, 0x20, 0, 3, 0x10, 30, 0x10, 1, 0x10, 2, 0x10})
	f.Add([]byte{0, 0, 3, 0, 0, 0x9d, 128, 16, 0, 1, 0x9d, 128, 34, 0})
	// 20 items dirty, one swapped to writeback, another refused, batches.
	f.Add([]byte{0, 0x3f, 0, 0x01, 0, 0x02, 0, 0x03, 0, 0x04, 0, 0x05, 0, 0x06, 0, 0x07, 0, 0x08,
		0, 0x09, 0, 0x0a, 0, 0x0b, 0, 0x0c, 0, 0x0d, 0, 0x0e, 0, 0x0f, 0, 0x10, 0, 0x11, 0, 0x12, 0, 0x13,
		3, 0x3f, 3, 0x01, 3, 0x02, 3, 0x03, 3, 0x04, 3, 0x05, 3, 0x06, 3, 0x07, 3, 0x08, 3, 0x09,
		3, 0x0a, 3, 0x0b, 3, 0x0c, 3, 0x0d, 3, 0x0e, 3, 0x0f, 3, 0x10, 3, 0x11, 3, 0x12, 3, 0x13,
		9, 0x05, 21, 0x05, 10, 0x06, 11, 0x00, 11, 0x09, 23, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := decodeOps(data)
		for _, c := range constructors {
			newOracle().run(t, c.make(), ops)
		}
	})
}
