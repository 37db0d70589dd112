package md

import "errors"

// Errors New and Submit return. Each is wrapped with the details of the call;
// test with errors.Is. A member's error reaches the parent bio unchanged (so
// errors.Is(err, blk.ErrIO) works through an array) only where the level has
// no redundancy left to absorb it: raid0, or a raid10/raid6 that has lost
// data (see degraded.go); otherwise the member is marked faulty and the I/O
// is served from the other copy or from parity.
var (
	// ErrBadLevel: a Level outside Raid0..Raid6, or a name ParseLevel does not
	// know (mdadm: "invalid raid level").
	ErrBadLevel = errors.New("md: unknown RAID level")
	// ErrBadChunk: a chunk size that is not a power of two, is below 4096 bytes or
	// is below the members' logical block size (mdadm rejects such a --chunk).
	ErrBadChunk = errors.New("md: invalid chunk size")
	// ErrTooFewMembers: fewer members than the level needs (raid0 and raid10 two,
	// raid6 four).
	ErrTooFewMembers = errors.New("md: too few member devices")
	// ErrTooManyMembers: a raid6 of more than 257 members. Q gives each data
	// member its own coefficient g^k, and g = 2 has only 255 distinct powers.
	ErrTooManyMembers = errors.New("md: too many member devices")
	// ErrMemberMismatch: members that differ in size or logical block size. md
	// itself would use the smallest size; the model asks for equal members.
	ErrMemberMismatch = errors.New("md: member devices differ")
	// ErrBadMember: a nil member, a member too small to hold one chunk per copy,
	// or (raid6) a logical block size larger than the 4096-byte stripe unit.
	ErrBadMember = errors.New("md: unusable member device")
	// ErrBadStripeCache: a Config.StripeCacheSize outside the range
	// raid5_set_cache_size accepts (17 to 32768 stripe_heads).
	ErrBadStripeCache = errors.New("md: invalid stripe cache size")
	// ErrMixedData: a bio whose vectors mix data and metadata-only (nil) segments.
	// The array either moves and checks every byte or none.
	ErrMixedData = errors.New("md: bio mixes data and metadata-only vectors")
)
