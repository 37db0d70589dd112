// Package md models Linux software RAID (drivers/md, v5.10) as block devices:
// raid0, raid10 in its near-2 and far-2 layouts, and raid6, the four RAID
// columns of the Helios4 table in the set_init_blocksize revert thread
// ("[PATCH] Revert "block: simplify set_init_blocksize" to regain lost
// performance", Maxim Mikityanskiy, LKML, 26 Jan 2021).
//
// # Bio-based and request-based devices
//
// The block layer knows two kinds of driver. A request-based driver (a SATA
// disk behind blk-mq) never sees a bio: the bios a task submits wait in its plug,
// merge into requests of up to max_sectors, and the driver receives requests.
// A bio-based driver implements submit_bio itself and receives every bio as it
// was submitted, unmerged. md is bio-based: md_submit_bio hands each bio to the
// personality (raid0.c, raid10.c, raid5.c, which also runs level 6), and the
// personality maps it onto the members and submits new bios to the members'
// queues. Merging happens only there, below md. So md's own work is per bio: a
// page written back as eight 512-byte buffer_heads costs the personality eight
// times what one 4 KiB bio costs.
//
// [Array] implements [blk.Device] in that way: Submit maps the bio and sends
// member bios, and completes the parent once the last of them has completed.
// [Stats] counts the per-bio work and the member I/O. It also implements
// [blk.PlugSubmitter]: submitted through blk.SubmitBio under a started plug,
// raid0 and raid10 write member bios go through that plug, so they merge in the
// member queues as in the kernel, where the personality runs in the submitting
// task; raid6 writes wait in the plug in the stripe cache and are handled when
// it is flushed (below). Member reads go through the plug too, as the kernel
// submits them in the reading task (readahead holds a plug around its bios).
//
// # Chunks and layouts
//
// Every level cuts the array's address space into chunks (512 KiB by default
// since mdadm 3.1) and places chunk c on the members. A bio that crosses a chunk
// boundary is split there (bio_split), one piece per chunk. The pictures show
// four members, chunk numbers in the cells, one row per chunk-sized band of
// each member.
//
// raid0 stripes: chunk c lives on member c mod n at row c / n. Capacity is n
// members. Nothing is stored twice and any member error fails the I/O.
//
//	       m0   m1   m2   m3
//	row 0   0    1    2    3
//	row 1   4    5    6    7
//
// raid10 near-2 (mdadm's default layout "n2") writes each chunk to two adjacent
// members at the same offset: copy k of chunk c takes slot 2c+k of a raid0
// striping. With four members it is raid1 pairs (m0,m1) and (m2,m3) striped
// together. Capacity is n/2 members.
//
//	       m0   m1   m2   m3
//	row 0   0    0    1    1
//	row 1   2    2    3    3
//
// raid10 far-2 ("f2") lays the array out twice: the first copy striped like
// raid0 over the first half of every member, the second copy in the second half,
// shifted by one member, so the two copies of a chunk never share a member.
//
//	       m0   m1   m2   m3
//	row 0   0    1    2    3     first half: raid0
//	row 1   4    5    6    7
//	row 0'  3    0    1    2     second half: shifted copy
//	row 1'  7    4    5    6
//
// Writes go to both copies in either layout, so raid10 writes twice the bytes.
// Reads need one copy, which raid10's read_balance (v5.10) picks for each
// chunk-sized piece. On rotating members,
// f2 reads the lowest address, the first copy, and the first copy is exactly
// a raid0 over all n members: a long sequential read streams from every
// spindle at the members' fastest (outer) zone, which is why RAID10 f2 is
// said to read like RAID0. n2 reads from an idle mirror, or from a busy one
// whose head is nearer: in the kernel a readahead window's reads are on the
// disks for milliseconds, so the next window finds its pairs' first mirrors
// busy and a sequential read alternates between the two members of a pair,
// the chunks one skips passing under its head. The model's member queues
// complete a request when they dispatch it, so only reads that wait in one
// plug together see each other in flight, and a dd's readahead reads n2 from
// the first copies (docs/known-differences.md). On non-rotational members
// both layouts read from the copy with the fewest I/Os in flight. (Without
// balancing the first copies of n2 use only the even members, m0 and m2
// above.) On the Helios4 all RAID reads sit at 310–400 MB/s, far below four
// disks' 1 GB/s, so the SoC, not the layout, bounds them there.
//
// # RAID6 parity and the stripe cache
//
// raid6 gives each row of n−2 data chunks two parity chunks. P is the xor of the
// data; Q is the Reed–Solomon syndrome Σ g^k·D_k over GF(2^8) with generator
// g = 2 and polynomial 0x11d, the field of the kernel's raid6 library. Any two
// lost chunks of a row can be solved for. The left-symmetric layout (mdadm's
// default) rotates P one member to the left per row, puts Q after P, and starts
// the data just after Q:
//
//	       m0   m1   m2   m3
//	row 0   Q   D0   D1    P
//	row 1  D0   D1    P    Q
//	row 2  D1    P    Q   D0
//	row 3   P    Q   D0   D1
//
// Parity work happens in the stripe cache, in stripe_heads one PAGE_SIZE
// (4096-byte) unit wide: the units at one member offset on every member of a
// row. raid5_make_request attaches a write to the stripe_head of every unit it
// touches (add_stripe_bio, which notes when the writes attached to a data unit
// cover all of it), and the bio completes when every stripe it touched has been
// written. A stripe is handled (handle_stripe, in the raid5d thread) once for
// all the writes attached to it by then: one member bio per member it reads or
// writes. Reads bypass the cache when the array is not degraded
// (chunk_aligned_read) and behave like raid0 over the data chunks.
//
// How a stripe computes its new parity depends on how much of it the writes
// attached to it cover (handle_stripe_dirtying):
//
//   - Full-stripe write: every data unit is wholly overwritten. P and Q are
//     computed from the new data alone; nothing is read.
//   - Reconstruct-write (rcw): read every data unit the writes do not wholly
//     overwrite, then compute P and Q from all the data.
//   - Read-modify-write (rmw): read the old contents of the units written and the
//     old P and Q, then fold the old data out of the parity and the new data in
//     (P ⊕= old ⊕ new, Q ⊕= g^k·(old ⊕ new)).
//
// A partly written unit must be read in both methods, since the member is
// written a whole page at a time. Until v4.1 raid6 could only reconstruct-write:
// rmw needs the raid6 library's xor_syndrome, added with "md/raid5: activate
// raid6 rmw feature" (Markus Stockhausen, v4.1). The Helios4 kernels (v5.9 to
// 5.10.10) have it, enabled by default where the raid6 library provides
// xor_syndrome (rmw_level 1), so this model counts the pre-reads of both methods
// for each stripe and does rmw only when it reads strictly fewer, rcw otherwise
// (ties go to rcw), as v5.10 does. On four members (two data units per row) rmw
// always reads at least three units and rcw at most two, so a four-disk raid6
// like the Helios4's always reconstruct-writes; for a write inside one unit rmw
// wins from six members (a partial unit) or seven (a whole one).
//
// When a stripe is handled decides which method it gets. A task that holds a
// plug (writeback does, around its page loop) does not release its stripes to
// raid5d as it attaches writes: release_stripe_plug puts them on a list hung on
// the plug with blk_check_plugged, and raid5_unplug hands the list to raid5d
// only when the plug is flushed — at blk_finish_plug, or when the task sleeps,
// for instance because the stripe cache (stripe_cache_size, 256 stripe_heads by
// default) has no free stripe_head, or because a write overlaps one already
// waiting in its stripe. raid5d handles the stripes under its own plug, so the
// member bios of consecutive stripes merge in the member queues. With a
// sequential stream, all eight 512-byte bios of a page and both data units of a
// four-disk row are attached before their stripe is handled: full-stripe
// writes with no pre-reads, whatever the block size. The personality's work per
// bio differs — eight add_stripe_bio calls instead of one — and the disk I/O
// does not. A bio submitted with no plug has its stripes handled at once, each
// for that bio alone, so a lone 512-byte write reconstruct-writes.
//
// The model does the same. Array.SubmitPlugged attaches a raid6 write to its
// stripe_heads (each records, per data unit, which 512-byte sectors attached
// writes cover, the attached bios in order and, with data, its pages) and
// registers the array's callback on the plug ([blk.Plug.CheckPlugged]); the
// flush hands the stripes to the handler, which handles them as one batch: for
// each, a full-stripe write if every data unit is wholly covered, else rmw or
// rcw with the pre-reads above; the new data is copied into the stripe's pages
// (biodrain), in the order the writes came, before P and Q are computed. A full
// stripe cache or an overlapping write flushes the plug early; a stripe waiting
// in another task's plug is handled by the task that needs it, one being
// handled is waited for. Submit, with no plug, handles the bio's stripes as
// soon as it is attached, through the same code. Handling runs on the
// goroutine that flushes, not on a raid5d of its own.
//
// Not modelled: stripe_heads stay hashed in the kernel after they are written,
// with their pages up to date, so a later partial write to a recently written
// stripe may find what it would pre-read already there (the model frees a
// stripe_head once handled, and pre-reads again); the delayed list, on which
// raid5d parks stripes that need pre-reads while enough others are pending
// (preread_active_stripes, IO_THRESHOLD), and the batching of full-stripe
// writes into one batch_head (stripe_add_to_batch_list); the wait for a quarter
// of the cache to be free before a blocked submitter goes on
// (R5_INACTIVE_BLOCKED).
//
// # Why the Helios4 RAID columns are CPU-bound
//
// With 5.10.10 unpatched, set_init_blocksize leaves a block device at its
// logical block size, 512 bytes on the WD8003FFBX, so writeback through
// buffer_heads submits eight 512-byte bios per 4 KiB page. A member disk's queue
// merges them back into large requests, so the disk sees much the same I/O either
// way, but md cannot merge: every one of the eight bios goes through
// md_submit_bio and the personality, which maps it, splits it if needed, clones
// one member bio per copy (raid10: two) or attaches it to a stripe_head (raid6),
// and completes it. That per-bio work multiplied by eight, on a 1.6 GHz
// Cortex-A9, is the bottleneck: RAID10 writes fell from about 220 to 64 MB/s
// (3.4×) while a single disk fell only 1.7×, and the revert (a 4096-byte block
// size, one bio per page) restored them. Reads are unchanged because they are
// submitted a page or more per bio whatever the block size. RAID6 stays the
// slowest column even after the revert because of its parity work and
// stripe handling per page; under writeback's plug it handles the same
// full stripes with either block size, so what the block size changes there is
// the per-bio attach work. Stats.BiosIn, WriteBios, StripeAttach, MemberBios,
// Stripes and ParityBytes are the counts a cost model turns into that CPU time.
//
// # Degraded arrays
//
// A member that fails an I/O is marked faulty (md_error), as is one failed by
// hand (Array.SetFaulty, mdadm --fail). raid0 has nothing to fall back on and
// fails the I/O. raid10 reads the other copy and writes the surviving one, and
// refuses to fail the member holding a chunk's last copy (ErrLastCopy). raid6
// rebuilds a lost data unit from the others and P or Q, with up to two members
// lost, and writes skip the faulty members after reconstructing what a partial
// write needs; a third loss is ErrDataLost. Array.Degraded and Array.Failed
// report the state; Stats.MemberErrors and DegradedReads count the events. The
// kernel first tries to rewrite a bad sector from a good copy or to record it
// in the bad-block log; the model fails the member at once.
//
// # Data and metadata-only bios
//
// A bio either carries data in every vector or in none. With data, everything
// is stored: reading back through the array returns what was written, raid10's
// copies are equal and raid6's P and Q are correct on the members. Metadata-only
// bios move nothing but issue the same member bios, so a simulation of
// terabytes counts the same work in little memory.
package md
