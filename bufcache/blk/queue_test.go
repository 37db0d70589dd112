package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var _ Device = (*Queue)(nil)

func TestNewQueueErrors(t *testing.T) {
	disk, err := NewMemDisk("sdz", 1<<20, 512)
	require.NoError(t, err)
	badLimits := DefaultLimits(512, 4096)
	badLimits.MaxSegments = 0
	tests := []struct {
		name  string
		store *MemDisk
		model Model
		lim   Limits
	}{
		{"nil store", nil, Null{}, DefaultLimits(512, 4096)},
		{"nil model", disk, nil, DefaultLimits(512, 4096)},
		{"invalid HDD", disk, HDD{}, DefaultLimits(512, 4096)},
		{"invalid SSD", disk, SSD{MBps: -1}, DefaultLimits(512, 4096)},
		{"invalid limits", disk, Null{}, badLimits},
		{"logical block differs from the store's", disk, Null{}, DefaultLimits(4096, 4096)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := NewQueue("q", tc.store, tc.model, tc.lim)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			assert.Nil(t, q)
		})
	}
}

func TestQueueDevice(t *testing.T) {
	disk, err := NewMemDisk("sdz", 1<<20, 4096)
	require.NoError(t, err)
	lim := DefaultLimits(4096, 4096)
	q, err := NewQueue("", disk, SSD{MBps: 500}, lim)
	require.NoError(t, err)
	assert.Equal(t, "sdz", q.Name(), "an empty name is the store's")
	assert.Equal(t, uint64(2048), q.Sectors())
	assert.Equal(t, uint32(4096), q.LogicalBlockSize())
	assert.Equal(t, lim, q.Limits())

	named, err := NewQueue("sda", disk, Null{}, lim)
	require.NoError(t, err)
	assert.Equal(t, "sda", named.Name())
}

func TestSubmitDispatchesAtOnce(t *testing.T) {
	q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
	data := []byte("0123456789abcdef")
	buf := make([]byte, 512)
	copy(buf, data)
	c := newCompletions()
	w := c.bio(0, OpWrite, 3)
	w.AddPage(buf, 512, 7, 0)
	q.Submit(w)
	assert.Equal(t, []int{0}, c.order)

	got := make([]byte, 512)
	r := c.bio(1, OpRead, 3)
	r.AddVec(got, 512)
	q.Submit(r)
	assert.Equal(t, buf, got)
	assert.Equal(t, QueueStats{
		Read:  OpStats{Requests: 1, Bios: 1, Sectors: 1},
		Write: OpStats{Requests: 1, Bios: 1, Sectors: 1},
	}, q.Stats())
}
