package blk

// MaxStreams is the most sequential streams a StreamModel may track.
const MaxStreams = 8

// StreamModel is a Model of a device that serves several interleaved
// sequential streams without repositioning (a disk whose cache segments and
// command queueing absorb the interleaving). Streams returns how many it
// tracks, 1 to MaxStreams; a Model without this method tracks one.
type StreamModel interface {
	Model
	Streams() int
}

// streamsOf returns how many streams m tracks, clamped to [1, MaxStreams].
func streamsOf(m Model) int {
	if sm, ok := m.(StreamModel); ok {
		return min(max(sm.Streams(), 1), MaxStreams)
	}
	return 1
}

// streams remembers where the most recent sequential streams a queue served
// ended, newest first.
type streams struct {
	ends [MaxStreams]uint64
	n    int // valid entries
	hit  int // the entry find matched, or -1
}

// find looks for a tracked stream (among the newest k) that ends at sector.
// It returns that end and true (the request continues the stream), or the
// newest end, with true when there is one (a request elsewhere: the head
// is where the last request left it). O(k).
func (s *streams) find(sector uint64, k int) (uint64, bool) {
	s.hit = -1
	for i := range min(s.n, k) {
		if s.ends[i] == sector {
			s.hit = i
			return sector, true
		}
	}
	return s.ends[0], s.n > 0
}

// advance records that the request find was last asked about ended at end:
// the stream it continued, or a new stream, moves to the front. O(MaxStreams).
func (s *streams) advance(end uint64) {
	i := s.hit
	if i < 0 {
		i = min(s.n, MaxStreams-1)
		s.n = min(s.n+1, MaxStreams)
	}
	copy(s.ends[1:i+1], s.ends[:i])
	s.ends[0] = end
}
