package blk

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcurrentPlugsShareAQueue(t *testing.T) {
	// Four simulated CPUs, each with its own plug, write their own quarter of
	// one queue's disk at once; run under -race.
	const cpus, perCPU = 4, 1 << 20
	q := newQueue(t, "sda", cpus*perCPU, WD8003FFBX(), DefaultLimits(512, 4096))
	q.EnableTrace(64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	completed := 0
	for cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p Plug
			p.Start()
			for off := 0; off < perCPU; off += 512 {
				pos := cpu*perCPU + off
				data := bytes.Repeat([]byte{byte(cpu + 1)}, 512)
				b := &Bio{}
				b.Reset(OpWrite, uint64(pos)>>SectorShift)
				b.AddPage(data, 512, uint64(pos/4096), uint32(pos%4096))
				b.EndIO = func(b *Bio) {
					if b.Err == nil {
						mu.Lock()
						completed++
						mu.Unlock()
					}
				}
				SubmitBio(&p, q, b)
			}
			assert.NoError(t, p.Finish())
		}()
	}
	wg.Wait()
	require.Equal(t, cpus*perCPU/512, completed)
	got := make([]byte, cpus*perCPU)
	_, err := q.store.ReadAt(got, 0)
	require.NoError(t, err)
	for cpu := range cpus {
		assert.Equal(t, bytes.Repeat([]byte{byte(cpu + 1)}, perCPU), got[cpu*perCPU:(cpu+1)*perCPU])
	}
	st := q.Stats().Write
	assert.Equal(t, uint64(cpus*perCPU/512), st.Bios)
	assert.Equal(t, uint64(cpus*perCPU/(128*512)), st.Requests, "128 bios per request, whatever the interleaving")
	assert.Positive(t, q.BusyNS())
}
