// Package blk is the block layer beneath bhsim's buffer cache: bios, the device
// interface and a sparse in-memory disk that stores exactly what is written.
//
// In Linux the buffer cache never talks to a disk directly. submit_bh (fs/buffer.c)
// turns one buffer_head into a struct bio of one segment and hands it to
// submit_bio; the block layer plugs, merges and queues bios as requests, and the
// driver completes them, calling the bio's bi_end_io. This package keeps that
// shape: a [Bio] names an operation, a starting sector and the memory it moves,
// a [Device] accepts it and completes it by calling [Bio.EndIO] exactly once.
//
// The first device is [MemDisk], a sparse RAM disk. It is the data oracle of the
// whole simulation: what writeback sends lands there byte for byte, and a read
// returns it, so tests can check that the page cache never loses or invents data.
// Bios whose vectors carry no memory (the metadata-only mode used to simulate
// devices of many TiB) are accepted and counted but store nothing.
//
// Plugging, merging, request queues, md RAID personalities and device timing
// models are built on this interface by the write-path work (issue 4).
package blk
