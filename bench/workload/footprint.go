package workload

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// Kernel structure sizes on x86-64 that the model's memory is compared with
// (include/linux/mm_types.h, include/linux/buffer_head.h,
// include/linux/xarray.h).
const (
	// KernelPageBytes is sizeof(struct page), which struct folio overlays for
	// an order-0 folio: 64 bytes.
	KernelPageBytes = 64
	// KernelBufferHeadBytes is sizeof(struct buffer_head): 104 bytes.
	KernelBufferHeadBytes = 104
	// KernelXANodeBytes is sizeof(struct xa_node) with 64 slots: 576 bytes,
	// seven to a 4 KiB slab page.
	KernelXANodeBytes = 576
)

// ScaleDeviceBytes is the device FootprintOf measures on: 16 TiB, 2^32 pages
// of 4 KiB, so that page indices reach 2^32 − 1 and the xarray six levels.
const ScaleDeviceBytes = 16 << 40

// Footprint is the Go heap the model spends on cached pages and their buffer
// heads on a metadata-only device (no page data), measured by FootprintOf.
type Footprint struct {
	// Pages is the number of pages cached in each measurement.
	Pages int
	// PageBytes is the heap per cached page with a one-buffer ring (4 KiB
	// blocks) minus that buffer: the folio, its share of the page-cache index
	// and of the other per-page bookkeeping. Compare KernelBytesPerPage.
	PageBytes float64
	// BufferHeadBytes is the heap per buffer head: the difference between
	// rings of eight 512-byte buffers and rings of one 4 KiB buffer, per
	// extra buffer.
	BufferHeadBytes float64
	// Ring8PageBytes is the heap per cached page with eight 512-byte buffers.
	Ring8PageBytes float64
	// Height is the index height the pages needed.
	Height int
	// IndexNodes is the number of xarray nodes the pages' indices need: the
	// kernel's page cache spends KernelXANodeBytes on each.
	IndexNodes int
	// FolioStruct and BufferHeadStruct are unsafe.Sizeof of the Go structs
	// (the heap rounds each allocation up to its size class), the folio's
	// without the buffer head its frame holds for the ring's first buffer
	// (bufcache.Folio's spare, counted in PageBytes' one-buffer ring as the
	// buffer head it is; a cached page without buffers costs it as well).
	FolioStruct, BufferHeadStruct uintptr
}

// FootprintOf measures the heap the model needs per cached page and per
// buffer head: it caches pages pages of a metadata-only 16 TiB device with
// getblk — one block per page, so each page gets a full ring — first with
// 4 KiB blocks (one buffer per page), then, on a fresh machine, with 512-byte
// blocks (eight), and reads runtime.MemStats.HeapAlloc after a garbage
// collection before and after each. With sparse the pages are spread evenly
// over the whole device (page indices up to 2^32 − 1: the index needs its own
// nodes for almost every page, as a random metadata workload would); without
// it they are pages 0 … pages−1 (full index leaves, as a sequential read
// leaves them). Metadata-only pages carry no data; a page with data costs
// PAGE_SIZE more.
//
// The figure is what the Go heap really holds, size-class rounding and
// recycling lists included, so it varies a little between Go versions; the
// kernel's counterparts are KernelPageBytes, KernelBufferHeadBytes and
// KernelXANodeBytes. Other goroutines allocating meanwhile distort it: run it
// alone. Errors: pages outside [1, 2^32]. Cost: O(pages) time, and the memory
// measured.
func FootprintOf(pages int, sparse bool) (Footprint, error) {
	if pages < 1 || uint64(pages) > ScaleDeviceBytes/4096 {
		return Footprint{}, fmt.Errorf("workload: footprint of %d pages (want 1 … %d)", pages, uint64(ScaleDeviceBytes/4096))
	}
	fp := Footprint{
		Pages:            pages,
		FolioStruct:      reflect.TypeFor[bufcache.Folio]().Size() - reflect.TypeFor[bufcache.BufferHead]().Size(),
		BufferHeadStruct: reflect.TypeFor[bufcache.BufferHead]().Size(),
	}
	one, height, err := heapPerPage(pages, sparse, 4096)
	if err != nil {
		return Footprint{}, err
	}
	eight, _, err := heapPerPage(pages, sparse, 512)
	if err != nil {
		return Footprint{}, err
	}
	fp.Height = height
	xa := pageindex.New[struct{}](pageindex.KindXArray)
	for i := range uint64(pages) {
		xa.Insert(pageAt(i, pages, sparse), &struct{}{})
	}
	fp.IndexNodes = xa.Nodes()
	fp.BufferHeadBytes = (eight - one) / 7
	fp.PageBytes = one - fp.BufferHeadBytes
	fp.Ring8PageBytes = eight
	return fp, nil
}

// heapPerPage caches pages pages with buffers of bsize bytes on a fresh
// machine and returns the heap growth per page and the index height.
func heapPerPage(pages int, sparse bool, bsize uint32) (float64, int, error) {
	m, err := engine.Build(engine.MachineSpec{Config: bufcache.Config{InitBlocksize: blocksize.PolicyGrow},
		Disk: engine.DiskSpec{Name: "scale", Size: ScaleDeviceBytes, Logical: 512, MetadataOnly: true}})
	if err != nil {
		return 0, 0, err
	}
	d := m.Dev
	cpu := m.CPU(0)
	if err := d.SetBlocksize(cpu, bsize); err != nil {
		return 0, 0, err
	}
	perPage := uint64(4096 / bsize)
	before := liveHeap()
	for i := range uint64(pages) {
		bh, err := d.Getblk(cpu, pageAt(i, pages, sparse)*perPage, bsize)
		if err != nil {
			return 0, 0, err
		}
		bufcache.Brelse(cpu, bh)
	}
	after := liveHeap()
	if d.NrPages() != pages {
		return 0, 0, fmt.Errorf("workload: %d pages cached, want %d", d.NrPages(), pages)
	}
	height := d.IndexHeight()
	runtime.KeepAlive(d)
	return float64(int64(after)-int64(before)) / float64(pages), height, nil
}

// pageAt returns the index of the i-th of pages pages: i itself, or, sparse,
// spread evenly over the 16 TiB device.
func pageAt(i uint64, pages int, sparse bool) uint64 {
	if !sparse {
		return i
	}
	return i * (ScaleDeviceBytes / 4096 / uint64(pages))
}

// KernelBytesPerPage is what the kernel spends per cached page of the same
// layout, without buffers: struct page and the page's share of the xarray
// nodes.
func (fp Footprint) KernelBytesPerPage() float64 {
	return KernelPageBytes + float64(fp.IndexNodes)*KernelXANodeBytes/float64(fp.Pages)
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// String renders the footprint beside the kernel's sizes.
func (fp Footprint) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d pages, index height %d, %d xarray nodes (metadata-only, 16 TiB device)\n", fp.Pages, fp.Height, fp.IndexNodes)
	fmt.Fprintf(&sb, "  %-32s %10s %10s\n", "", "model", "kernel")
	fmt.Fprintf(&sb, "  %-32s %10.0f %10.0f\n", "bytes per cached page", fp.PageBytes, fp.KernelBytesPerPage())
	fmt.Fprintf(&sb, "  %-32s %10.0f %10d\n", "bytes per buffer head", fp.BufferHeadBytes, KernelBufferHeadBytes)
	fmt.Fprintf(&sb, "  %-32s %10.0f %10.0f\n", "bytes per page, 8 buffers", fp.Ring8PageBytes, fp.KernelBytesPerPage()+8*KernelBufferHeadBytes)
	fmt.Fprintf(&sb, "  %-32s %10d %10d\n", "Folio / struct page", fp.FolioStruct, KernelPageBytes)
	fmt.Fprintf(&sb, "  %-32s %10d %10d\n", "BufferHead / struct buffer_head", fp.BufferHeadStruct, KernelBufferHeadBytes)
	return sb.String()
}
