// Package bench holds bhsim's Go benchmarks of the reproduced threads, in
// both of the project's clocks; the simulation itself lives in its three
// subpackages:
//
//   - [github.com/bhsim/bhsim/bench/timing] turns the model's events into
//     simulated time: hardware profiles, the bottleneck law of a streaming
//     run, calibration and published-beside-simulated tables.
//   - [github.com/bhsim/bhsim/bench/workload] drives the model: dd, the
//     ext3 writetest, the lookup module and its sweeps, crash-loss, sweeps
//     over dd grids and one-operation explanations, each returning counted
//     events.
//   - [github.com/bhsim/bhsim/bench/threads] reproduces the four LKML
//     threads: their published data, their fits, one Reproduction each.
//
// # Two clocks
//
// Every bufcache operation does its real work in Go — walking rings, scanning
// LRU slots, descending the index, copying bytes — so `go test -bench`
// measures relative CPU costs on whatever machine runs it (ns/op, MB/s). The
// same operation also counts events on its simulated CPU, which a timing
// profile prices, so the simulated figures (sim-ns/op, sim-MB/s, bios/page,
// events per op) are the same on every machine and every run.
//
// Every simulated figure of a benchmark comes from a fixed, stated amount of
// simulated work — either per op of identical ops, or from a separate run of
// a stated size done once per process — never from b.N: a benchmark reports
// the same simulated figures at -benchtime=1x and at 100x, and tells
// benchstat they are exact ("Unit … assume=exact").
//
// Run them with
//
//	go test -run '^$' -bench . ./bench
//
// and compare variants with benchstat, for example the two block-size
// policies of the set_init_blocksize thread:
//
//	go test -run '^$' -bench '^BenchmarkDDWrite$' -count 6 ./bench > dd.txt
//	benchstat -col /policy dd.txt
package bench
