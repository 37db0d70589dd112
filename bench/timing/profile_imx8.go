package timing

import "github.com/bhsim/bhsim/bufcache"

// a53Slowdown is how much longer kernel code takes on a 1.8 GHz Cortex-A53
// than on the x86 server profile's ~3 GHz core: 1.7× the clock period times
// about 3× the cycles per instruction of an in-order, dual-issue core. An
// estimate, not a measurement.
const a53Slowdown = 5.0

// IMX8Board is the profile of the board of the iomap thread. Xu Yang (NXP) names
// neither the SoC nor how the SSD is attached; this profile assumes an
// i.MX 8M Plus class SoC — four Cortex-A53 at 1.8 GHz, ARMv8.0 (no LSE
// atomics, no hardware PAN), 4 KiB pages with THP — with 2 GiB of RAM and an
// SSD whose time the profile prices (disk-requests, disk-bytes: assumptions
// the iomap thread's fit names). Costs are the x86 server profile's scaled
// by a53Slowdown, except those where the cores differ in kind: atomics, the
// user-space access of the pre-fault and the copy. The iomap thread fits two of
// them.
func IMX8Board() *Profile {
	p := X86Server().Scaled("xu-yang-board", "NXP arm64 board of the iomap thread (assumed: 4 × Cortex-A53 at 1.8 GHz, 4 KiB pages with THP, 2 GiB, an SSD of assumed speed)",
		a53Slowdown, "Cortex-A53 at 1.8 GHz, estimate")
	set := p.Set
	const atomic = "estimate: an ldxr/stxr loop with the barriers of a value-returning atomic on ARMv8.0 without LSE ≈ 40 cycles at 1.8 GHz"
	for _, e := range []bufcache.Event{bufcache.EvFolioGet, bufcache.EvFolioPut, bufcache.EvBHGet, bufcache.EvBHPut} {
		set(Ev(e), 22, atomic)
	}
	set(Ev(bufcache.EvFolioLock), 44, atomic+", twice")
	set(Ev(bufcache.EvBHLock), 44, atomic+", twice")
	set(Ev(bufcache.EvBHBit), 16, "estimate: the mix of b_state's bit operations on ARMv8.0 without LSE — set_bit and clear_bit, an ldxr/stxr loop without barriers ≈ 20 cycles, and the value-returning test_and_ ones with their barriers ≈ 40 cycles — ≈ 30 cycles at 1.8 GHz")
	set(Ev(bufcache.EvFaultInPage), 60, "estimate: fault_in_readable's __get_user of one byte of a present page with the software PAN of ARMv8.0 (uaccess_ttbr0_enable/disable: a TTBR0 switch and an isb each way) ≈ 110 cycles")
	set(Ev(bufcache.EvCopyByte), 0.4, "estimate: copy_from_user of page-sized runs at ≈ 2.5 GB/s into LPDDR4")
	set(ParamDiskRequest, 20e3, "assumption (the thread names no disk): an SSD's command latency behind USB 3.0 UAS ≈ 20 µs")
	set(ParamDiskByte, 2.5, "assumption (the thread names no disk; /dev/sda on an i.MX 8M Plus board is a USB 3.0 or PCIe-attached disk): an SSD behind USB 3.0, whose 5 Gb/s with 8b/10b carries 500 MB/s at most and UAS bulk writes about 400 MB/s")
	set(ParamZeroByte, 0.25, "estimate: read_zero's clear_user at ≈ 4 GB/s of stores into LPDDR4 (Cortex-A53 store bandwidth)")
	set(ParamSyscall, 330, "estimate: an arm64 svc entry and exit ≈ 600 cycles at 1.8 GHz")
	set(ParamMemByte, 0.13, "assumption (the thread names no SoC): 32-bit LPDDR4-3200 of an i.MX 8M Plus class board peaks at 12.8 GB/s; about 60 % sustained ≈ 7.7 GB/s")
	set(ParamMemStall, 0, "0, the plain bottleneck: at the iomap thread's ≈ 340 MB/s, four passes a byte keep the assumed 7.7 GB/s bus under 20 % busy")
	set(ParamTimer, 0, "not used: no timed calls in the dd scenario")
	return p
}
