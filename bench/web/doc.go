// Package web is bhsim's teaching page: the model running in a browser as
// WebAssembly, for a teacher at a projector (`bhsim web`). It holds the
// page's four views as plain Go functions of JSON requests — each drives
// the model through the same library calls the command line makes, so the
// page prints what bhsim prints for the same inputs — the page itself
// (HTML, CSS and a small script, embedded), the server that serves it on
// a loopback address, and the build of the WebAssembly the page runs.
//
// The views:
//
//   - DD, the block-size view: a dd on a thread's machine at block sizes
//     from 512 bytes to 64 KiB, two kernels side by side, priced as
//     `bhsim sweep` prices it (workload.SweepDD): bios per page, requests
//     per MiB, simulated MB/s.
//   - Buffers: one folio's buffer_heads through a write(2), fsync's
//     writeback and the completion, a frame at each tracepoint the page
//     cache (bufcache.Tracer) and the block layer (blk.Tracer) report, with
//     the bios the buffers become and the requests the plug merges them
//     into.
//   - LRU: a sequence of __bread, __find_get_block and invalidate_bh_lrus
//     calls on the per-CPU bh LRU (bufcache's lookup over package lru): its
//     slots after each call and the events the call counted.
//   - Step: `bhsim run --step -s SEED` (engine.StepOptions), the same
//     seeded problem block by block, and as a quiz whose answers hide
//     until revealed.
//
// Call dispatches a view by name; the js build (js.go) exposes it to the
// page's script, and package bench/web/wasm is the WebAssembly's main.
// The server side (serve.go, not in the js build) builds that
// WebAssembly with the local Go toolchain when it starts: see Build.
package web
