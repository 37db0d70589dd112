// Package blk is the block layer beneath bhsim's buffer cache: bios, the device
// interface, a sparse in-memory disk that stores exactly what is written, and a
// request layer — requests, per-task plugging with merging, queue limits, the
// flush machinery, write throttling, device timing models, tracepoints and
// /sys/block statistics — as v5.10 (the Helios4 thread's kernels) and v6.18
// (the host kernel the model is checked against) have it.
//
// # Bios and devices
//
// In Linux the buffer cache never talks to a disk directly. submit_bh (fs/buffer.c)
// turns one buffer_head into a struct bio of one segment and hands it to
// submit_bio; the block layer plugs, merges and queues bios as requests, and the
// driver completes them, calling the bio's bi_end_io. This package keeps that
// shape: a [Bio] names an operation, a starting sector and the memory it moves,
// a [Device] accepts it and completes it by calling [Bio.EndIO] exactly once.
// Each vector of a bio also names where its memory lies — a page frame number
// and an offset ([Bio.AddPage]) — because whether two pieces of memory are
// physically adjacent decides how many DMA segments a request needs.
//
// The first device is [MemDisk], a sparse RAM disk. It is the data oracle of the
// whole simulation: what writeback sends lands there byte for byte, and a read
// returns it, so tests can check that the page cache never loses or invents data.
// Bios whose vectors carry no memory (the metadata-only mode used to simulate
// devices of many TiB) are accepted and counted but store nothing.
//
// # Requests, plugging and merging
//
// This part answers the device side of the Helios4 thread (Maxim Mikityanskiy,
// "Revert "block: simplify set_init_blocksize" to regain lost performance",
// January 2021): when the block device's block size fell from 4096 to 512 bytes,
// writeback sent eight bios per page instead of one. What did the disk see?
//
// A disk does not serve bios; it serves requests. In v5.10 submit_bio reaches
// blk_mq_submit_bio, which first splits a bio that exceeds the queue's limits
// (__blk_queue_split), then, if the task holds a plug (blk_start_plug, as
// writeback does around its page loop), tries to append the bio to a request
// already waiting in the plug (blk_attempt_plug_merge). A bio that starts
// exactly where such a request ends, with the same operation, is a back merge:
// it costs no new request, as long as the request stays within max_sectors and
// max_segments. Otherwise a new request is made and added to the plug; before
// that, the plug is flushed if it already holds BLK_MAX_REQUEST_COUNT requests
// or its newest request is at least BLK_PLUG_FLUSH_SIZE bytes. blk_finish_plug
// (and schedule()) flushes the rest: the requests go to the driver in order.
//
// The model: a [Queue] is a blk-mq queue with the "none" scheduler in front of a
// MemDisk; [Plug] is struct blk_plug, owned by one simulated CPU; [SubmitBio] is
// submit_bio. The numbers come from include/linux/blkdev.h of v5.10 (and, where
// a later kernel changed them, of that kernel):
//
//   - BLK_MAX_REQUEST_COUNT = 16 ([PlugMaxRequests]); about v5.16 it became 32
//     ([PlugMaxRequests516]) and plugs spanning several queues got twice that
//     (the doubling is not modelled). The reference quotes the 16 → 32 change
//     from memory.
//   - BLK_PLUG_FLUSH_SIZE = 128 KiB ([PlugFlushSize]).
//   - BLK_DEF_MAX_SECTORS = 2560 sectors = 1280 KiB (raised to 4 MiB only in
//     2025), BLK_MAX_SEGMENTS = 128, BLK_MAX_SEGMENT_SIZE = 64 KiB: see
//     [DefaultLimits]. Drivers change them; an AHCI SATA host allows 168
//     segments (AHCI_MAX_SG, from memory).
//   - v5.10's blk_attempt_plug_merge tries the plugged requests of the bio's
//     queue from newest to oldest; from about v5.16 only the newest
//     ([Plug.NewestOnly]).
//
// Counting segments is where the two block sizes part. A request's segment
// count, nr_phys_segments, is the sum of its bios' counts: inside one bio,
// physically contiguous memory is one segment (bio_add_page grows a multi-page
// bio_vec and blk_bio_segment_split cuts it at max_segment_size), but across
// bios nothing coalesces, even when the memory is adjacent — the merge check
// ll_back_merge_fn only adds. So a request of 512-byte bios is full at 128 bios,
// 64 KiB, while 4 KiB bios on scattered page-cache pages fill 128 segments at
// 512 KiB; max_sectors binds only for large bios of contiguous pages. The DMA
// mapping later (blk_rq_map_sg) does coalesce, so eight 512-byte bios of a page
// become one scatter-gather entry; the variant [SegmentsCoalesced] limits merges
// by that count instead, to show how large the requests would be if the merge
// check saw what the DMA sees. [SegmentsPerBio], the kernel's, is the default.
//
// A bio larger than the limits is split as blk_bio_segment_split does: at
// max_sectors, shortened to end on a physical block (get_max_io_size), or where
// one more byte would need segment max_segments+1, rounded down to a logical
// block. The front parts are REQ_NOMERGE (they neither merge nor accept merges)
// and the bio completes once, with its last part.
//
// Not modelled in v5.10, and why that is fine for sequential writeback: front
// merges (a bio that ends where a request starts — writeback moves forward, so
// they do not arise); merges in an I/O scheduler (blk_mq_sched_try_merge, and
// blk_bio_list_merge which checks up to 8 queued requests) and request-to-
// request merges — with "none" and dispatch at flush there is no queue for a
// request to wait in; the segment boundary and virtual boundary masks (unset for
// SATA disks); queue depth and asynchronous completion (dispatch is
// synchronous, see [Queue]). Plug callbacks are modelled ([Plug.CheckPlugged],
// blk_check_plugged): md's RAID6 parks its stripes on the plug and handles
// them when the plug is flushed, before the plugged requests go out. A bio that
// fails submit_bio_noacct's checks ([CheckBio]) completes with the error at
// once, before the bios waiting in the plug, as in the kernel.
//
// # Linux 6.18
//
// [Limits.Version] selects the kernel; [LoopLimits] is the queue of the loop
// device the corpus ran on (docs/host-kernel.md, and docs/block-layer.md for
// how the model reproduces it). What 6.18 changes (see [Version618]): the plug
// tries one merge — back or front — into its newest request
// (blk_attempt_plug_merge), its request limit is 32, and a full plug's flush
// runs no callbacks. What both kernels have and the 6.18 preset turns on:
//
//   - a volatile write cache ([Limits.WriteCache], [Limits.FUA]): a preflush
//     bio becomes a flush request, a FUA write without FUA support is
//     followed by one (blk-flush; see [Queue]);
//   - writeback throttling ([Limits.WriteThrottleDepth], blk-wbt): a task
//     about to exceed 16 synchronous write requests in flight sleeps, and its
//     plug is flushed as schedule() flushes it — the 16-request unplugs with
//     block_rq_insert that the host recorded;
//   - blk-throttle in front of the request layer ([Queue.SetThrottle] with a
//     [Throttle]): a bio its rule holds is submitted later by the kthrotld
//     worker, under a plug of its own with the other bios of its timer tick,
//     so a rule changes which requests the bios form.
//
// A [Tracer] set on a queue ([Queue.SetTracer]) sees the block tracepoints
// ([TraceKind]), or only those of a set ([Queue.SetTracerKinds]), as a
// tracing instance sees only the events enabled in it; a [BioTracer] takes
// the bio tracepoints as arguments rather than as an event; [Queue.BlockStat] is /sys/block/<dev>/stat. Requests fail with
// the store's errors: [MemDisk.SetBackingFull] models the loop device's
// backing file on a full tmpfs (ENOSPC, [Errno]), and the error reaches every
// bio of the request.
//
// # Timing models
//
// A textbook divides the time a disk needs for one request into three parts:
//
//	service time = overhead + positioning + transfer
//
// The overhead is the command's fixed cost (issue, interrupt, completion); the
// positioning is the seek to the track plus the rotational delay until the
// sector comes round, on average half a revolution (4.17 ms at 7200 rpm);
// transfer is the request's bytes over the media rate. Positioning is paid only
// when a request does not start where the previous one ended: a sequential
// stream pays it once. [HDD] is this model, [SSD] has a fixed latency and no
// positioning, and [Null] takes no time. Any [Model] is a function of the
// previous request's end and the new request, so a queue's timing is
// deterministic.
//
// Each queue adds its requests' service times to its busy time ([Queue.BusyNS]),
// the time the device is busy. For a stream, the device's throughput is the
// bytes moved over the busy time, and the whole system's is bounded by its
// busiest resource — the disk's busy time or a CPU's. For the WD8003FFBX model
// ([WD8003FFBX]: 255 MB/s, 10 µs overhead) a 1280 KiB request takes 5150 µs
// (254.5 MB/s), a 512 KiB one 2066 µs (253.8 MB/s), a 64 KiB one 267 µs
// (245.4 MB/s) and a lone 4 KiB one 26 µs (157 MB/s). So in this model the
// 64 KiB requests of 512-byte writeback cost the disk only about 4 %; the drop
// from 254 to 149 MB/s on the Helios4 must come from elsewhere: from the
// per-bio CPU cost, which the rest of bhsim counts (docs/threads.md).
//
// # The request trace
//
// [Queue.EnableTrace] keeps the newest n dispatched requests (a bounded log
// of the block_rq_issue events), and
// [Queue.WriteTrace] prints them one per line, like blkparse's issue events:
//
//	sda 7 D W 2048 + 1024 [bios 128, segs 128] 2066.0 us
//
// device, sequence number, D (issued to the driver), R, W or F (flush), first sector, +
// sectors, the bio parts and segments the request carried, and the model's
// service time.
package blk
