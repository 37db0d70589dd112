package workload

import (
	"context"
	"fmt"
	"reflect"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// OnClock runs d on the engine's clock (engine.Run) priced by p and returns
// the run: dd as a sequential stream of d's blocks on one CPU, each write
// reading its block from /dev/zero first, each read writing it to
// /dev/null after, the run ending with the device's last close
// (engine.RunOptions.FromZero, ToNull, LastClose); on d's kernel, its
// disks (one, or an md array of Members, engine.RunOptions.Array) behind
// queues of d's limits, and a machine whose page cache holds
// d.PageCacheLimit folios. Its MBps is the dd's rate as coreutils dd
// reports it: the bytes over the whole run, the close included.
//
// The clock places every call, flusher pass and request in time, with
// balance_dirty_pages pacing the writer; docs/known-differences.md says
// where it parts from the kernel. (Run counts a dd's work without a
// clock: its events, md's and the disks' counters.)
//
// The clock's machine has dd's CPU, the flusher's and kswapd; d.CPUs
// beyond dd's and the flusher's are idle in a dd, and only the all-CPU
// bound would count them. A disk with no timing model (blk.Null, as Xu
// Yang's board's) is priced
// by p: an SSD of p's disk-requests latency and disk-bytes rate. d.SetBlocksize is set once dd has opened the device
// (engine.RunOptions.SetBlocksize). d.Data and d.UntouchedBuffer are not
// used (the engine's device is metadata-only, and its writes' buffers are
// the engine's). Like Start, it refuses a dd that moves more than d's
// device (its disk, or the array over its members) holds. progress, when not nil, is called with the blocks done
// and d.Count at least every quarter second of wall time and at the end
// (engine.RunOptions.Progress). Errors: d's (ErrInvalidDD: a block size
// its kernel refuses among them) and engine.Run's. O(the run's work),
// as Run; it holds one of the process's dd slots (RunAll's) while it runs,
// so that callers side by side run GOMAXPROCS dd runs at a time.
func (d DD) OnClock(ctx context.Context, p *timing.Profile, progress func(done, total int)) (*engine.RunResult, error) {
	d, err := d.resolved()
	if err != nil {
		return nil, err
	}
	size, err := d.deviceBytes()
	if err != nil {
		return nil, err
	}
	if err := d.fits(size); err != nil {
		return nil, err
	}
	logical := max(d.Logical, 512)
	if d.SetBlocksize != 0 { // refused as Start refuses it, before a run
		if err := d.Kernel.SetBlocksize.Validate(d.SetBlocksize, logical, 4096); err != nil {
			return nil, fmt.Errorf("%w: kernel %s: %w", ErrInvalidDD, d.Kernel.Name, err)
		}
	}
	reads := 0
	if d.Read {
		reads = 1
	}
	g, err := source.ParseGenerator(fmt.Sprintf("seq:dev=%d,n=%d,size=%d,reads=%d,cpus=1", d.BS*d.Count, d.Count, d.BS, reads))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	w, err := engine.GenWorkload(g)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	w.LogicalBlockSize = logical
	lim := blk.DefaultLimits(logical, max(logical, 4096))
	if d.MaxSegments != 0 {
		lim.MaxSegments = d.MaxSegments
	}
	o := engine.RunOptions{Kernel: d.Kernel, Profile: p, Disk: d.clockDisk(p), MemoryBytes: clockMemory(d.PageCacheLimit),
		FromZero: !d.Read, ToNull: d.Read, LastClose: true, Limits: &lim, SetBlocksize: d.SetBlocksize}
	if progress != nil {
		o.Progress = func(done, total uint64) { progress(int(done), int(total)) }
	}
	if d.Layout != LayoutDirect {
		o.Array = engine.Array{Level: layoutLevels[d.Layout], Members: d.Members, Chunk: d.Chunk}
	}
	var res *engine.RunResult
	err = ddSlots.Do(func() error {
		res, err = engine.Run(ctx, w, o)
		return err
	})
	return res, err
}

// clockDisk is d's disk on the clock: its model, named as the built-in
// disk it is (engine.Disks: "hdd"), or for a disk with none
// (blk.Null) an SSD of p's request latency and byte rate
// (timing.ParamDiskRequest, ParamDiskByte).
func (d DD) clockDisk(p *timing.Profile) engine.Disk {
	if _, priced := d.Disk.(blk.Null); priced {
		return engine.Disk{Name: "ssd (" + p.Name + ")", Model: blk.SSD{MBps: 1e3 / p.NS[timing.ParamDiskByte], LatencyNS: p.NS[timing.ParamDiskRequest]}}
	}
	name := "model"
	for _, b := range engine.Disks() {
		if reflect.DeepEqual(b.Model, d.Disk) {
			name = b.Name
		}
	}
	return engine.Disk{Name: name, Model: d.Disk}
}

// clockMemory is the engine's memory whose page cache (three quarters of
// it, engine.RunOptions.MemoryBytes) holds exactly folios pages of 4 KiB:
// four times a third of their bytes, rounded up.
func clockMemory(folios int) uint64 {
	if folios <= 0 {
		return 0 // the engine's default
	}
	return 4 * ((uint64(folios)*4096 + 2) / 3)
}
