package md

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestMemberBiosMergeUnderThePlug: raid0/raid10 write member bios go through
// the submitter's plug, so 4 KiB writes sent one by one reach the member queues
// as merged requests; without a plug every member bio is a request of its own.
// Data lands where a direct submission puts it.
func TestMemberBiosMergeUnderThePlug(t *testing.T) {
	const member = 4 << 20
	for _, level := range []Level{Raid0, Raid10Near2, Raid10Far2} {
		for _, plugged := range []bool{false, true} {
			t.Run(fmt.Sprintf("level=%s/plugged=%v", level, plugged), func(t *testing.T) {
				var queues []*blk.Queue
				var members []blk.Device
				for i := range 4 {
					store, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), member, 512)
					require.NoError(t, err)
					q, err := blk.NewQueue("", store, blk.Null{}, blk.DefaultLimits(512, 4096))
					require.NoError(t, err)
					queues, members = append(queues, q), append(members, q)
				}
				a, err := New(Config{Level: level, ChunkSize: 64 << 10}, members)
				require.NoError(t, err)
				data := make([]byte, 1<<20)
				for i := range data {
					data[i] = byte(i / 4096)
				}
				var plug blk.Plug
				if plugged {
					plug.Start()
				}
				done := 0
				for off := 0; off < len(data); off += 4096 {
					b := new(blk.Bio)
					b.Reset(blk.OpWrite, uint64(off)>>blk.SectorShift)
					b.AddPage(data[off:off+4096], 4096, uint64(2*off/4096), 0)
					b.EndIO = func(b *blk.Bio) { require.NoError(t, b.Err); done++ }
					blk.SubmitBio(&plug, a, b)
				}
				if plugged {
					require.NoError(t, plug.Finish())
				}
				assert.Equal(t, 256, done, "every parent bio completed")
				var reqs, bios uint64
				for _, q := range queues {
					reqs += q.Stats().Write.Requests
					bios += q.Stats().Write.Bios
				}
				if plugged {
					assert.Less(t, reqs*8, bios, "member bios merged: %d requests for %d bios", reqs, bios)
				} else {
					assert.Equal(t, bios, reqs, "no plug: one request per member bio")
				}
				got := make([]byte, len(data))
				r := new(blk.Bio)
				r.Reset(blk.OpRead, 0)
				r.AddVec(got, uint32(len(got)))
				r.EndIO = func(*blk.Bio) {}
				a.Submit(r)
				require.NoError(t, r.Err)
				assert.True(t, bytes.Equal(data, got))
			})
		}
	}
}
