package md

// Stats counts the work an array did: the per-bio personality work of
// md_submit_bio, the RAID6 stripe handling and the member I/O it generated.
// Each counter is a count a cost model prices: package bench turns BiosIn,
// MemberBios, StripeAttach, WriteBios, Stripes and ParityBytes into CPU time.
// Submit's and SubmitPlugged's docs say when each moves.
type Stats struct {
	// BiosIn counts bios that passed validation and reached the personality
	// (md_submit_bio: per-bio personality work). Rejected bios are not counted.
	BiosIn uint64
	// BytesIn is the payload of those bios.
	BytesIn uint64
	// WriteBios counts the write bios that went through the redundancy
	// bookkeeping of raid10 and raid6: md_write_start and md_write_end, the
	// write-intent bitmap's start and end, and for raid10 the r10bio and the
	// barrier. A raid10 write split at chunk boundaries counts once per piece,
	// as each remainder passes raid10_make_request again; a raid6 write counts
	// once (raid5_make_request does not split writes; its bitmap work is per
	// stripe, priced by Stripes). raid0 writes and all reads do not count.
	WriteBios uint64
	// MemberBios counts bios the array sent to members, reads and writes.
	MemberBios uint64
	// MemberReads counts member read bios issued only to compute parity (RAID6
	// read-modify-write or reconstruct-write pre-reads); reads that serve a
	// caller's read are not counted here.
	MemberReads uint64
	// StripeAttach counts RAID6 add_stripe_bio calls: one per write bio per
	// PAGE_SIZE data unit it touches (raid5_make_request's loop steps one unit
	// at a time, so a bio spanning both data units of a four-disk stripe
	// attaches to it twice). Eight 512-byte bios of a page attach eight times
	// where one 4 KiB bio attaches once.
	StripeAttach uint64
	// Stripes counts RAID6 stripe_heads handled (handle_stripe runs that
	// compute parity and write): a stripe_head is handled once for all the
	// writes attached to it while it waited, so a plugged stream of small
	// sequential writes handles each stripe once.
	Stripes uint64
	// FullStripeWrites counts handled stripes written without pre-reading (the
	// attached writes overwrote every data unit of the stripe).
	FullStripeWrites uint64
	// RMWWrites counts handled stripes written after pre-reading, by either
	// read-modify-write or reconstruct-write.
	RMWWrites uint64
	// ReconstructWrites counts the RMWWrites stripes that used reconstruct-write
	// (read the other data units) rather than read-modify-write (read the old data
	// and old P and Q).
	ReconstructWrites uint64
	// ParityBytes counts RAID6 bytes of P and Q computed: 2 × PAGE_SIZE per
	// stripe handled.
	ParityBytes uint64
	// Splits counts bio splits at chunk boundaries (bio_split calls: a bio
	// spanning k chunks is split k−1 times). The kernel resubmits each remainder
	// with submit_bio_noacct, so it passes through md_submit_bio again: BiosIn +
	// Splits is the number of personality passes. RAID6 writes are not split:
	// they are attached stripe by stripe.
	Splits uint64
	// MemberErrors counts member bios that completed with an error. On raid10
	// and raid6 each marks its member faulty (md_error) and the array goes
	// on degraded; on raid0 it fails the array's bio.
	MemberErrors uint64
	// DegradedReads counts member reads that their member could not serve
	// (it failed them, or it was faulty) and that were served instead by the
	// other copy (raid10) or rebuilt from the other members (raid6). A raid10
	// read that read_balance sends to the other copy because the member it
	// would have picked with every member working is faulty counts too.
	DegradedReads uint64
}

// add adds o's counters to s.
func (s *Stats) add(o *Stats) {
	s.BiosIn += o.BiosIn
	s.BytesIn += o.BytesIn
	s.WriteBios += o.WriteBios
	s.MemberBios += o.MemberBios
	s.MemberReads += o.MemberReads
	s.StripeAttach += o.StripeAttach
	s.Stripes += o.Stripes
	s.FullStripeWrites += o.FullStripeWrites
	s.RMWWrites += o.RMWWrites
	s.ReconstructWrites += o.ReconstructWrites
	s.ParityBytes += o.ParityBytes
	s.Splits += o.Splits
	s.MemberErrors += o.MemberErrors
	s.DegradedReads += o.DegradedReads
}

// Sub returns the counters s gained since earlier, a snapshot of the same
// array taken before it. O(1).
func (s Stats) Sub(earlier Stats) Stats {
	return Stats{
		BiosIn: s.BiosIn - earlier.BiosIn, BytesIn: s.BytesIn - earlier.BytesIn,
		WriteBios: s.WriteBios - earlier.WriteBios, MemberBios: s.MemberBios - earlier.MemberBios,
		MemberReads: s.MemberReads - earlier.MemberReads, StripeAttach: s.StripeAttach - earlier.StripeAttach,
		Stripes: s.Stripes - earlier.Stripes, FullStripeWrites: s.FullStripeWrites - earlier.FullStripeWrites,
		RMWWrites: s.RMWWrites - earlier.RMWWrites, ReconstructWrites: s.ReconstructWrites - earlier.ReconstructWrites,
		ParityBytes: s.ParityBytes - earlier.ParityBytes, Splits: s.Splits - earlier.Splits,
		MemberErrors: s.MemberErrors - earlier.MemberErrors, DegradedReads: s.DegradedReads - earlier.DegradedReads,
	}
}

// Stats returns the array's counters: a consistent snapshot that includes every
// bio whose parent has completed and every stripe handled for it. Complexity
// O(1).
func (a *Array) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}
