package md

// Stats counts the work an array did: the per-bio personality work of
// md_submit_bio and the member I/O it generated. A cost model turns these into
// CPU time; Submit's doc says when each counter moves.
type Stats struct {
	// BiosIn counts bios that passed validation and reached the personality
	// (md_submit_bio: per-bio personality work). Rejected bios are not counted.
	BiosIn uint64
	// BytesIn is the payload of those bios.
	BytesIn uint64
	// MemberBios counts bios the array sent to members, reads and writes.
	MemberBios uint64
	// MemberReads counts member read bios issued only to compute parity (RAID6
	// read-modify-write or reconstruct-write pre-reads); reads that serve a
	// caller's read are not counted here.
	MemberReads uint64
	// Stripes counts RAID6 stripe_head operations: one per PAGE_SIZE-wide stripe
	// unit each write request touches.
	Stripes uint64
	// FullStripeWrites counts RAID6 stripes written without pre-reading (the
	// request overwrote every data unit of the stripe).
	FullStripeWrites uint64
	// RMWWrites counts RAID6 stripes written after pre-reading, by either
	// read-modify-write or reconstruct-write.
	RMWWrites uint64
	// ReconstructWrites counts the RMWWrites stripes that used reconstruct-write
	// (read the other data units) rather than read-modify-write (read the old data
	// and old P and Q).
	ReconstructWrites uint64
	// ParityBytes counts RAID6 bytes of P and Q computed: 2 × PAGE_SIZE per stripe.
	ParityBytes uint64
	// Splits counts bio splits at chunk boundaries (bio_split calls: a bio
	// spanning k chunks is split k−1 times). The kernel resubmits each remainder
	// with submit_bio_noacct, so it passes through md_submit_bio again: BiosIn +
	// Splits is the number of personality passes. RAID6 writes are not split:
	// they are handled stripe by stripe.
	Splits uint64
}

// add adds o's counters to s.
func (s *Stats) add(o *Stats) {
	s.BiosIn += o.BiosIn
	s.BytesIn += o.BytesIn
	s.MemberBios += o.MemberBios
	s.MemberReads += o.MemberReads
	s.Stripes += o.Stripes
	s.FullStripeWrites += o.FullStripeWrites
	s.RMWWrites += o.RMWWrites
	s.ReconstructWrites += o.ReconstructWrites
	s.ParityBytes += o.ParityBytes
	s.Splits += o.Splits
}

// Stats returns the array's counters: a consistent snapshot that includes every
// bio whose parent has completed. Complexity O(1).
func (a *Array) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}
