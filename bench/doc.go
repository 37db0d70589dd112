// Package bench turns the model's events into simulated time and reproduces
// the LKML threads bhsim is about, beside Go benchmarks of the same code.
//
// # Two clocks
//
// Every bufcache operation does its real work in Go — walking rings, scanning
// LRU slots, descending the index — so `go test -bench` measures relative CPU
// costs on whatever machine runs it. The same operation also counts events on
// its simulated CPU. A [Profile] prices each event in nanoseconds for a given
// machine, with the source of each figure, and [Profile.SimNS] turns counts into
// simulated nanoseconds that are the same on every machine and every run. The
// benchmarks report both: ns/op from Go, sim-ns/op and events per op
// (lru-compares/op, index-levels/op, …) from the model.
//
// # Calibration
//
// [Calibrate] fits named costs of a profile to named published cells by least
// squares and reports every cell, fitted or predicted, with its error; it
// refuses as many parameters as cells. For the bh-LRU thread (seed 004) one
// parameter is fitted, the harness cost of a timed call (ParamTimer: Tosatti's
// ktime_get), to the 68 ns of __find_get_block_slow; the 114 ns of
// __find_get_block is then a prediction from the documented costs.
//
// # The bh-LRU thread
//
// Marcelo Tosatti measured 114 ns per __find_get_block(bdev, 1, 512) and 68 ns
// per __find_get_block_slow(bdev, 1) on /dev/loop0 and proposed removing the
// per-CPU LRU. The model, run on his module as written ([TosattiSeed],
// [ReproduceLRU]), shows why the LRU lost: a loop device of an ordinary size
// (1 GiB) gets 4 KiB blocks from set_init_blocksize's grow policy, and the LRU
// compares the size argument, so (bdev, 1, 512) never matches the 4096-byte
// buffer it holds. Every __find_get_block call scans all 16 slots, takes the
// slow path anyway, and re-installs the buffer. The test timed the LRU's miss
// cost on top of the slow path, not a hit. Willy asked for a rerun at block
// 4UL<<30: on the same 1 GiB device that block does not exist (both calls return
// NULL at once); on a device large enough the slow path pays six xarray levels
// while an LRU hit would pay none ([HeightSweep]). Cycling more distinct blocks
// than the LRU has slots turns every call into a miss ([CycleSweep]): Dave
// Chinner's point that a lookaside cache only pays when the working set fits.
package bench
