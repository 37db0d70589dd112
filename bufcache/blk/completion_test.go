package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompletionOrderWithErrors(t *testing.T) {
	type sub struct {
		op      Op
		sector  uint64
		n       uint32
		wantErr error
	}
	const end = (1 << 20) >> SectorShift // the 1 MiB disk's sectors
	tests := []struct {
		name    string
		logical uint32
		subs    []sub
		plugged []int // completion order with a plug: failures first
		want    []reqShape
	}{
		{"beyond end inside a merged stream", 512, []sub{
			{OpWrite, end - 16, 4096, nil},
			{OpWrite, end - 8, 4096, nil},
			{OpWrite, end, 4096, ErrBeyondEnd}, // would continue the request
			{OpWrite, end + 8, 4096, ErrBeyondEnd},
			{OpWrite, 0, 4096, nil},
		}, []int{2, 3, 0, 1, 4}, []reqShape{{end - 16, 16, 2, 2}, {0, 8, 1, 1}}},
		{"straddling the end", 512, []sub{
			{OpWrite, end - 16, 4096, nil},
			{OpWrite, end - 8, 8192, ErrBeyondEnd},
			{OpWrite, 0, 4096, nil},
		}, []int{1, 0, 2}, []reqShape{{end - 16, 8, 1, 1}, {0, 8, 1, 1}}},
		{"empty bio", 512, []sub{
			{OpWrite, 0, 4096, nil},
			{OpWrite, 8, 0, ErrMisaligned},
			{OpWrite, 8, 4096, nil},
		}, []int{1, 0, 2}, []reqShape{{0, 16, 2, 2}}},
		{"misaligned on a 4Kn disk", 4096, []sub{
			{OpWrite, 0, 4096, nil},
			{OpWrite, 8, 512, ErrMisaligned},
			{OpWrite, 9, 4096, ErrMisaligned},
			{OpWrite, 8, 4096, nil},
		}, []int{1, 2, 0, 3}, []reqShape{{0, 16, 2, 2}}},
		{"unknown operation", 512, []sub{
			{OpWrite, 0, 4096, nil},
			{Op(7), 8, 4096, ErrNotSupported},
			{OpRead, 16, 4096, nil},
		}, []int{1, 0, 2}, []reqShape{{0, 8, 1, 1}, {16, 8, 1, 1}}},
	}
	for _, tc := range tests {
		for _, plugged := range []bool{false, true} {
			name := tc.name + map[bool]string{false: ", no plug", true: ", plugged"}[plugged]
			t.Run(name, func(t *testing.T) {
				q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(tc.logical, max(tc.logical, 4096)))
				q.EnableTrace(16)
				c := newCompletions()
				var p Plug
				if plugged {
					p.Start()
				}
				for i, s := range tc.subs {
					SubmitBio(&p, q, c.pageBio(i, s.op, s.sector, s.n, uint64(10*i), 0))
					if s.wantErr != nil {
						assert.Equal(t, 1, c.count[i], "bio %d fails at once", i)
					}
				}
				if plugged {
					require.NoError(t, p.Finish())
				}
				failed := 0
				for i, s := range tc.subs {
					assert.Equal(t, 1, c.count[i], "bio %d completes once", i)
					if s.wantErr == nil {
						assert.NoError(t, c.errs[i], "bio %d", i)
					} else {
						assert.ErrorIs(t, c.errs[i], s.wantErr, "bio %d", i)
						failed++
					}
				}
				assert.Equal(t, uint64(failed), q.Stats().Errors)
				if !plugged {
					want := make([]int, len(tc.subs))
					for i := range want {
						want[i] = i
					}
					assert.Equal(t, want, c.order)
					return
				}
				assert.Equal(t, tc.plugged, c.order)
				assert.Equal(t, tc.want, shapes(q))
			})
		}
	}
}

func TestCompletionFollowsRequests(t *testing.T) {
	// Completions follow the requests in dispatch order and, inside each,
	// the bios in merge order: a bio merged into an older request completes
	// before a newer request's bios.
	q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
	c := newCompletions()
	var p Plug
	p.Start()
	for i, s := range []uint64{0, 100, 8, 108, 16} {
		SubmitBio(&p, q, c.pageBio(i, OpWrite, s, 4096, uint64(10*i), 0))
	}
	require.NoError(t, p.Finish())
	assert.Equal(t, []int{0, 2, 4, 1, 3}, c.order)
}

func TestSplitBioCompletesOnce(t *testing.T) {
	// A bio split into several requests completes once, after its last part,
	// and in order with the bios around it.
	q := newQueue(t, "sda", 64<<20, Null{}, DefaultLimits(512, 4096))
	c := newCompletions()
	var p Plug
	p.Start()
	SubmitBio(&p, q, c.pageBio(0, OpWrite, 0, 4096, 1, 0))
	big := c.bio(1, OpWrite, 8)
	for i := range 1000 {
		big.AddPage(nil, 4096, uint64(3*i), 0)
	}
	SubmitBio(&p, q, big)
	SubmitBio(&p, q, c.pageBio(2, OpWrite, 8+8000, 4096, 1, 0))
	require.NoError(t, p.Finish())
	assert.Equal(t, []int{0, 1, 2}, c.order)
	for id := range 3 {
		assert.Equal(t, 1, c.count[id])
		assert.NoError(t, c.errs[id])
	}
	st := q.Stats().Write
	assert.Equal(t, uint64(1+8000/1024+1), st.Requests) // 1000 pages: 7 full parts and a last one
	assert.Equal(t, uint64(7), st.Splits)
	assert.Equal(t, uint64(1), st.Merges, "the last part accepts the next bio")
	assert.Equal(t, uint64(8+8000+8), st.Sectors)
}
