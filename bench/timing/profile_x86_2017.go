package timing

import "github.com/bhsim/bhsim/bufcache"

// X86Desktop2017GHz is the assumed clock of the 2017 desktop in GHz, and
// serverClock the x86 server profile's, whose cycle counts it reuses.
const (
	X86Desktop2017GHz = 3.5
	serverClock       = 3.0
)

// X86Desktop2017 is the profile of the machine of the alloc_page_buffers thread. Sean Fu does not
// name his hardware (his host name, linux-zmni, is openSUSE's default, so a
// desktop or laptop install); this profile assumes a desktop of June 2017: one
// core of a Skylake client CPU (Core i5-6600/i7-6700 class, 6th generation)
// at about 3.5 GHz under load, DDR4-2133 in two channels, 4 KiB pages, a 4.12
// kernel.
//
// The Skylake client core and the server cores the X86Server profile counts
// cycles for (Skylake-SP, Ice Lake, Zen 3) have the same L1 latency and
// locked-instruction costs within a few cycles (Agner Fog's instruction tables
// and microarchitecture guide), so most costs are the server profile's cycle
// counts at 3.5 GHz instead of 3 GHz. Set apart: the two costs the thread is
// about (a step along a buffer ring, the stores that build one), the
// allocation of a buffer_head as 4.12 did it, and the copy to and from user
// space, which a desktop's two DDR4 channels bound.
//
// The alloc thread (package threads) fits two per-page costs of this profile;
// everything the model says about the patch comes from the unfitted ring costs.
func X86Desktop2017() *Profile {
	p := X86Server().Scaled("x86-2017",
		"x86-64 desktop of 2017 (assumed: one Skylake client core at ~3.5 GHz, DDR4-2133 dual channel, 4 KiB pages, Linux 4.12)",
		serverClock/X86Desktop2017GHz, "the same cycle counts at 3.5 GHz instead of 3 GHz: exactly 3/3.5 = 0.857")
	p.Set(Ev(bufcache.EvRingWalk), 6/X86Desktop2017GHz,
		"Skylake: an L1-hit load has 4–5 cycles of load-to-use latency (Intel optimization manual, Agner Fog); one step of b_this_page plus the loop's compare and branch ≈ 6 cycles = 1.71 ns. The buffers were zeroed by the allocator a few hundred cycles earlier, so they are in L1")
	p.Set(Ev(bufcache.EvRingLink), 5/X86Desktop2017GHz,
		"Skylake retires one store a cycle (one store-data port, Agner Fog): the ~5 stores that set up one buffer_head in alloc_page_buffers' loop, or the closing link ≈ 5 cycles = 1.43 ns")
	p.Set(Ev(bufcache.EvBHAlloc), 17,
		"estimate: 4.12's alloc_buffer_head: kmem_cache_zalloc(GFP_NOFS) of a 104-byte object from the SLUB per-CPU freelist (no memcg accounting of buffer heads yet) plus the per-CPU bh_accounting update ≈ 60 cycles at 3.5 GHz")
	p.Set(Ev(bufcache.EvCopyByte), 0.1,
		"estimate: copy_user_enhanced_fast_string (ERMS rep movsb) of page-sized runs at ≈ 10 GB/s: an 800 MiB stream does not stay in an 8 MiB L3, and two DDR4-2133 channels (34 GB/s peak) give one core about a third of that for a copy")
	p.Set(ParamTimer, 0, "not used: the alloc_page_buffers thread times whole processes (time(1)), no timed calls")
	return p
}
