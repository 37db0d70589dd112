package blk

// NullDisk is null_blk with memory backing off: a device of a given size that
// completes every valid bio at once, discards what is written and reads zeros.
// It measures the cost of everything above the device. NullDisk is safe for
// concurrent use (it keeps no state).
type NullDisk struct {
	name    string
	sectors uint64
	lbs     uint32
}

// NewNullDisk returns a null device of sizeBytes with the given logical block
// size. Errors: as NewMemDisk.
func NewNullDisk(name string, sizeBytes uint64, logical uint32) (*NullDisk, error) {
	if err := checkDisk(name, sizeBytes, logical); err != nil {
		return nil, err
	}
	return &NullDisk{name: name, sectors: sizeBytes >> SectorShift, lbs: logical}, nil
}

// Name implements Device.
func (d *NullDisk) Name() string { return d.name }

// Sectors implements Device.
func (d *NullDisk) Sectors() uint64 { return d.sectors }

// LogicalBlockSize implements Device.
func (d *NullDisk) LogicalBlockSize() uint32 { return d.lbs }

// Submit implements Device: it validates b (CheckBio), zero-fills the vectors
// of a read, and completes b before returning; a flush completes at once.
func (d *NullDisk) Submit(b *Bio) {
	if err := CheckBio(d, b); err != nil {
		b.Complete(err)
		return
	}
	if b.Op == OpRead {
		for _, v := range b.vecs {
			clear(v.Data)
		}
	}
	b.Complete(nil)
}
