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
// task. Reads and raid6 writes, whose rounds wait for their member bios, are
// submitted to the members directly (the kernel's raid5d batching of stripes
// across bios at unplug is not modelled yet).
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
// Reads need one copy. This model reads the first copy (raid10's read_balance,
// which spreads reads over idle mirrors, is not modelled). In f2 the first copy
// is exactly a raid0 over all n members: a long sequential read streams from
// every spindle at the members' fastest (outer) zone, which is why RAID10 f2 is
// said to read like RAID0. The first copies of n2 use only the even members
// (m0, m2 above), so n2 needs read balancing to reach the same. On the Helios4
// all RAID reads sit at 310–400 MB/s, far below four disks' 1 GB/s, so the SoC,
// not the layout, bounds them there.
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
// row. A write is attached to each stripe_head it touches, and each is handled
// on its own (handle_stripe): one member bio per member per stripe, which the
// member queues merge again. Reads bypass the cache when the array is not
// degraded (chunk_aligned_read) and behave like raid0 over the data chunks.
//
// How a stripe computes its new parity depends on how much of it the write
// covers (handle_stripe_dirtying):
//
//   - Full-stripe write: every data unit is wholly overwritten. P and Q are
//     computed from the new data alone; nothing is read.
//   - Reconstruct-write (rcw): read every data unit the write does not wholly
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
// This model keeps no stripe cache between bios: every write's stripes are
// planned, pre-read and written for that write alone, and RAID6 writes to one
// array are handled one at a time, as the single raid5d thread handles stripes.
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
// stripe handling per page. Stats.BiosIn, MemberBios and Stripes are the counts
// a cost model turns into that CPU time.
//
// # Data and metadata-only bios
//
// A bio either carries data in every vector or in none. With data, everything
// is stored: reading back through the array returns what was written, raid10's
// copies are equal and raid6's P and Q are correct on the members. Metadata-only
// bios move nothing but issue the same member bios, so a simulation of
// terabytes counts the same work in little memory.
package md
