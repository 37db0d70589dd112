package lru

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNew(t *testing.T) {
	good := newPool(1).hooks()
	tests := []struct {
		name     string
		cpus     int
		size     int
		hooks    Hooks[*testBH]
		want     error
		wantCPUs int
		wantSize int
	}{
		{name: "default", cpus: 4, size: DefaultSize, hooks: good, wantCPUs: 4, wantSize: 16},
		{name: "old", cpus: 1, size: OldSize, hooks: good, wantCPUs: 1, wantSize: 8},
		{name: "size=1", cpus: 2, size: 1, hooks: good, wantCPUs: 2, wantSize: 1},
		{name: "cpus=0", cpus: 0, size: 16, hooks: good, want: ErrCPUs},
		{name: "cpus<0", cpus: -3, size: 16, hooks: good, want: ErrCPUs},
		{name: "size=0", cpus: 1, size: 0, hooks: good, want: ErrSize},
		{name: "size<0", cpus: 1, size: -1, hooks: good, want: ErrSize},
		{name: "size huge", cpus: 1 << 20, size: 1 << 50, hooks: good, want: ErrSize},
		{name: "no hold", cpus: 1, size: 16, hooks: Hooks[*testBH]{Release: good.Release}, want: ErrHooks},
		{name: "no release", cpus: 1, size: 16, hooks: Hooks[*testBH]{Hold: good.Hold}, want: ErrHooks},
		{name: "no hooks", cpus: 1, size: 16, want: ErrHooks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New[bhKey](tt.cpus, tt.size, tt.hooks)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
				assert.Nil(t, c)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCPUs, c.CPUs())
			assert.Equal(t, tt.wantSize, c.Size())
			assert.False(t, c.Disabled())
			for cpu := range c.CPUs() {
				assert.Zero(t, c.Len(cpu))
				assert.False(t, c.Isolated(cpu))
			}
			assert.NoError(t, c.Check())
		})
	}
}

// TestPadding checks that CPUs stored side by side keep their hot fields and
// their slots at least falseSharingRange bytes apart.
func TestPadding(t *testing.T) {
	strides := []struct {
		name   string
		stride uintptr
	}{
		{name: "cpuLRU[bhKey,*testBH]", stride: unsafe.Sizeof(cpuLRU[bhKey, *testBH]{})},
		{name: "cpuLRU[int,*int]", stride: unsafe.Sizeof(cpuLRU[int, *int]{})},
		{name: "cpuLRU[[100]byte,uint8]", stride: unsafe.Sizeof(cpuLRU[[100]byte, uint8]{})},
	}
	for _, tt := range strides {
		t.Run(tt.name, func(t *testing.T) {
			assert.Zero(t, tt.stride%falseSharingRange, "stride %d", tt.stride)
		})
	}
	pads := []struct {
		slotBytes uintptr
		wantPad   int
	}{
		{slotBytes: 8, wantPad: 16},
		{slotBytes: 32, wantPad: 4},
		{slotBytes: 100, wantPad: 2},
		{slotBytes: 200, wantPad: 1},
		{slotBytes: 0, wantPad: 0},
	}
	for _, tt := range pads {
		t.Run(fmt.Sprintf("slot-bytes=%d", tt.slotBytes), func(t *testing.T) {
			assert.Equal(t, tt.wantPad, padSlots(tt.slotBytes))
		})
	}
	c, _ := newTestCache(t, 3, DefaultSize, 1)
	for cpu := range c.CPUs() - 1 {
		last := uintptr(unsafe.Pointer(&c.cpus[cpu].slots[c.Size()-1]))
		next := uintptr(unsafe.Pointer(&c.cpus[cpu+1].slots[0]))
		gap := next - last - unsafe.Sizeof(c.cpus[cpu].slots[0])
		assert.GreaterOrEqual(t, gap, uintptr(falseSharingRange), "cpu %d", cpu)
	}
}
