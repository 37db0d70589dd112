package source

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// virtualTrace is an io.Reader of a trace that exists nowhere: a header,
// then line(i) for i = 0, 1, … until size bytes are out (the last line
// whole). It holds one line at a time, so a trace of many gigabytes costs
// nothing to make.
type virtualTrace struct {
	header string
	line   func(dst []byte, i uint64) []byte
	size   int64
	sent   int64
	i      uint64
	buf    []byte // what is left of the current line
	store  []byte // its storage, reused
}

func (v *virtualTrace) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(v.buf) == 0 {
			if v.sent >= v.size {
				break
			}
			if v.header != "" {
				v.store = append(v.store[:0], v.header...)
				v.header = ""
			} else {
				v.store = v.line(v.store[:0], v.i)
				v.i++
			}
			v.buf = v.store
		}
		c := copy(p[n:], v.buf)
		v.buf = v.buf[c:]
		n += c
		v.sent += int64(c)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// virtualFormats make a virtual trace of each streaming format.
var virtualFormats = []struct {
	name   string
	header string
	line   func(dst []byte, i uint64) []byte
	open   func(io.Reader) IOReader
}{
	{"blkparse", "", func(b []byte, i uint64) []byte {
		b = append(b, "  8,0    "...)
		b = strconv.AppendUint(b, i%4, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, i+1, 10)
		b = append(b, "     "...)
		b = strconv.AppendUint(b, i/1000000, 10)
		b = append(b, '.')
		ns := i % 1000000 * 1000
		for d := uint64(100000000); d > 0; d /= 10 {
			b = append(b, byte('0'+ns/d%10))
		}
		b = append(b, "  4242  Q  WS "...)
		b = strconv.AppendUint(b, (i*8)%(1<<30), 10)
		return append(b, " + 8 [fio]\n"...)
	}, func(r io.Reader) IOReader { return NewBlkparseReader(r) }},
	{"fio", "fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdb open\n", func(b []byte, i uint64) []byte {
		b = strconv.AppendUint(b, i+2, 10)
		if i%2 == 0 {
			b = append(b, " /dev/sdb write "...)
		} else {
			b = append(b, " /dev/sdb read "...)
		}
		b = strconv.AppendUint(b, (i*4096)%(1<<40), 10)
		return append(b, " 4096\n"...)
	}, func(r io.Reader) IOReader { return NewFioLogReader(r) }},
	{"csv", CSVHeader + "\n", func(b []byte, i uint64) []byte {
		b = append(b, "write,"...)
		b = strconv.AppendUint(b, (i*4096)%(1<<40), 10)
		b = append(b, ",4K,"...)
		b = strconv.AppendUint(b, i%8, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, i*100, 10)
		return append(b, '\n')
	}, func(r io.Reader) IOReader { return NewCSVReader(r) }},
}

// memoryRun reads a virtual trace of size bytes and returns the records,
// the heap's peak (HeapAlloc sampled every 64Ki records) and the
// allocations per record.
func memoryRun(t *testing.T, i int, size int64) (records uint64, peak uint64, mallocsPerRecord float64) {
	f := virtualFormats[i]
	v := &virtualTrace{header: f.header, line: f.line, size: size}
	r := f.open(v)
	runtime.GC()
	var before, ms runtime.MemStats
	runtime.ReadMemStats(&before)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if rec.Kind == 0 {
			t.Fatal("invalid record")
		}
		records++
		if records%(64<<10) == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapAlloc)
	return records, peak, float64(ms.Mallocs-before.Mallocs) / float64(records)
}

// TestTraceReadersBoundedMemory streams virtual traces through every text
// reader and checks that the heap does not grow with the trace's length:
// the peak over a trace eight times longer is within 4 MiB of the short
// one's, and the allocations per record are the same. BHSIM_TRACE_MIB sets
// the long trace's size per format (default 64 MiB; docs/traces.md reports
// a run at 4096).
func TestTraceReadersBoundedMemory(t *testing.T) {
	long := int64(64 << 20)
	if s := os.Getenv("BHSIM_TRACE_MIB"); s != "" {
		mib, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		long = mib << 20
	}
	if testing.Short() {
		long = 8 << 20
	}
	for i, f := range virtualFormats {
		t.Run(f.name, func(t *testing.T) {
			n1, peak1, per1 := memoryRun(t, i, long/8)
			n2, peak2, per2 := memoryRun(t, i, long)
			t.Logf("%s: %d MiB, %d records: heap peak %.1f MiB (%.1f MiB for %d records), %.2f allocations per record",
				f.name, long>>20, n2, float64(peak2)/(1<<20), float64(peak1)/(1<<20), n1, per2)
			assert.Greater(t, n2, 7*n1)
			assert.Less(t, peak2, peak1+4<<20, "the heap does not grow with the trace")
			assert.Less(t, peak2, uint64(32<<20))
			assert.InDelta(t, per1, per2, 0.05, "allocations per record do not grow")
			assert.LessOrEqual(t, per2, 2.0)
		})
	}
}

// TestTraceReadersAllocs pins the allocations of one record: one line
// string each (the CSV reader's ParseDDSize of a suffixed length adds
// none).
func TestTraceReadersAllocs(t *testing.T) {
	for i, f := range virtualFormats {
		v := &virtualTrace{header: f.header, line: f.line, size: 1 << 40}
		r := f.open(v)
		_, err := r.Next()
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, 1.0, virtualFormats[i].name)
	}
}

// TestGeneratorBoundedMemory: a generated stream of millions of I/Os keeps
// a flat heap and allocates nothing per record.
func TestGeneratorBoundedMemory(t *testing.T) {
	g, err := ParseGenerator("zipf:dev=1T,n=2000000,size=4K-64K,reads=0.5,cpus=8,cpumode=percpu,fsync=16,scatter=1,seed=3")
	require.NoError(t, err)
	r, err := NewGenerator(g)
	require.NoError(t, err)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		n++
	}
	runtime.ReadMemStats(&after)
	assert.Greater(t, n, 2000000)
	assert.Less(t, after.Mallocs-before.Mallocs, uint64(1000), "no allocation per record")
}

// publicFormats make a virtual trace of each column-mapped format.
var publicFormats = []struct {
	name   string
	header string
	line   func(dst []byte, i uint64) []byte
	open   func(io.Reader) IOReader
}{
	{"msr", "", func(b []byte, i uint64) []byte {
		b = strconv.AppendUint(b, 128166372003061629+i*1000, 10)
		b = append(b, ",hm,0,Write,"...)
		b = strconv.AppendUint(b, (i*4096)%(1<<40), 10)
		return append(b, ",4096,5689\n"...)
	}, func(r io.Reader) IOReader { return NewMSRReader(r) }},
	{"spc", "", func(b []byte, i uint64) []byte {
		b = append(b, "0,"...)
		b = strconv.AppendUint(b, i*8, 10)
		b = append(b, ",4096,r,"...)
		b = strconv.AppendUint(b, i/1000, 10)
		b = append(b, '.')
		return append(strconv.AppendUint(b, 100000+i%1000, 10), '\n')
	}, func(r io.Reader) IOReader { return NewSPCReader(r) }},
	{"disksim", "", func(b []byte, i uint64) []byte {
		b = strconv.AppendUint(b, i, 10)
		b = append(b, ".25 0 "...)
		b = strconv.AppendUint(b, i*8, 10)
		return append(b, " 8 1\n"...)
	}, func(r io.Reader) IOReader { return NewDiskSimReader(r) }},
	{"fiolog", "", func(b []byte, i uint64) []byte {
		b = strconv.AppendUint(b, i/100, 10)
		b = append(b, ", 120384, 1, 4096, "...)
		b = strconv.AppendUint(b, (i*4096)%(1<<40), 10)
		return append(b, ", 0\n"...)
	}, func(r io.Reader) IOReader { return NewFioStatLogReader(r) }},
	{"columns", "version,time,op,size,lbn\n", func(b []byte, i uint64) []byte {
		b = append(b, "1,"...)
		b = strconv.AppendUint(b, i/100, 10)
		b = append(b, ",2a,4096,"...)
		return append(strconv.AppendUint(b, i*8, 10), '\n')
	}, func(r io.Reader) IOReader {
		m, _ := HeaderColumnMap([]string{"version", "time", "op", "size", "lbn"})
		return NewColumnReader(r, m)
	}},
}

// TestPublicReadersAllocs pins the column-mapped readers to one allocation
// per record (the line) and a heap that stays flat over 8 MiB of trace.
func TestPublicReadersAllocs(t *testing.T) {
	for _, f := range publicFormats {
		v := &virtualTrace{header: f.header, line: f.line, size: 1 << 40}
		r := f.open(v)
		_, err := r.Next()
		require.NoError(t, err, f.name)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, 1.0, f.name)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := 0
		for r := f.open(&virtualTrace{header: f.header, line: f.line, size: 8 << 20}); ; n++ {
			if _, err := r.Next(); err == io.EOF {
				break
			} else {
				require.NoError(t, err, f.name)
			}
		}
		runtime.ReadMemStats(&after)
		assert.Greater(t, n, 100000, f.name)
		assert.Less(t, after.HeapAlloc, before.HeapAlloc+8<<20, f.name)
	}
}
