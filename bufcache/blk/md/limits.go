package md

// OptimalIOSize returns the array's io_opt in bytes: a chunk on every
// member that holds a different part of a stripe — raid0's members,
// raid10's members over its near copies (n2 on four members: two), a
// RAID6 row's data chunks (members − 2). md sets it so that a reader may
// ask for whole stripes: in v6.18 raid0_set_limits, raid10_set_queue_limits
// (raid10_nr_stripes) and raid5_set_limits set lim.io_opt, and
// blk_apply_bdi_limits makes the array's readahead window twice it; in v5.10
// raid0_run, raid10_run and raid5_run call blk_queue_io_opt, which sets the
// window the same way (since v5.9 md no longer sets ra_pages itself). The
// block device's readahead (bufcache) reads it. O(1).
func (a *Array) OptimalIOSize() uint32 {
	stripes := uint32(len(a.members))
	switch a.level {
	case Raid10Near2:
		if stripes%2 == 0 { // raid10_nr_stripes: members / near_copies when it divides
			stripes /= 2
		}
	case Raid6:
		stripes -= 2
	}
	return stripes << a.chunkShift
}
