package lru

import "testing"

// fuzzSizes are the LRU sizes FuzzLRU picks from.
var fuzzSizes = [...]int{1, 2, 3, OldSize, DefaultSize}

const (
	fuzzCPUs = 3
	fuzzKeys = 24
)

// decodeOps turns fuzz bytes into a size and operations: byte 0 picks the size,
// then each pair of bytes is one operation (kind and CPU, then key).
func decodeOps(data []byte) (size int, ops []op) {
	if len(data) == 0 {
		return fuzzSizes[0], nil
	}
	size = fuzzSizes[int(data[0])%len(fuzzSizes)]
	for i := 1; i+1 < len(data); i += 2 {
		ops = append(ops, op{
			kind: opKind(data[i] % byte(numOps)),
			cpu:  int(data[i]/byte(numOps)) % fuzzCPUs,
			key:  int(data[i+1]) % fuzzKeys,
		})
	}
	return size, ops
}

// encodeOps is decodeOps' inverse, for the seed corpus.
func encodeOps(sizeIndex byte, ops ...op) []byte {
	data := []byte{sizeIndex}
	for _, o := range ops {
		data = append(data, byte(o.cpu)*byte(numOps)+byte(o.kind), byte(o.key))
	}
	return data
}

// FuzzLRU runs decoded operation sequences against the slice model, which
// checks results, contents, reference counts and Check after every operation.
func FuzzLRU(f *testing.F) {
	var fillAll []op
	for k := range 20 {
		fillAll = append(fillAll, op{kind: opInstall, cpu: k % fuzzCPUs, key: k})
	}
	fillAll = append(fillAll, op{opLookupKeep, 2, 17}, op{opInvalidateCPU, 1, 0}, op{opRelease, 0, 17})
	seeds := [][]byte{
		encodeOps(4),
		encodeOps(4, op{opInstall, 0, 1}, op{opLookup, 0, 1}, op{opInvalidateAll, 0, 0}),
		encodeOps(0, op{opInstall, 1, 1}, op{opInstall, 1, 2}, op{opLookupKeep, 1, 2}, op{opInstall, 1, 2}),
		encodeOps(3, op{opDisable, 0, 0}, op{opInstall, 2, 5}, op{opEnable, 0, 0}, op{opEnable, 0, 0}),
		encodeOps(2, op{opIsolate, 2, 0}, op{opInstall, 2, 5}, op{opLookup, 2, 5}, op{opIsolate, 2, 0}),
		encodeOps(4, fillAll...),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		size, ops := decodeOps(data)
		c, p := newTestCache(t, fuzzCPUs, size, fuzzKeys)
		m := newModel(fuzzCPUs, size, fuzzKeys)
		for _, o := range ops {
			m.apply(t, c, p, o)
		}
		m.finish(t, c, p)
	})
}
