package md

import "github.com/bhsim/bhsim/bufcache/blk"

// seek returns the index of the vector holding byte off of a bio's payload and
// the offset of that byte within the vector. O(len(vecs)).
func seek(vecs []blk.Vec, off uint32) (int, uint32) {
	i := 0
	for i < len(vecs) && off >= vecs[i].Len {
		off -= vecs[i].Len
		i++
	}
	return i, off
}

// addVecs appends to mb the parent payload's bytes [off, off+n) as segments that
// alias the parent's memory, at the same simulated physical pages (bio_split and
// bio_clone share pages, they copy nothing), so member queues see the parent's
// physical contiguity. Metadata-only vectors give metadata-only segments. The
// range must lie within the payload.
func addVecs(mb *blk.Bio, vecs []blk.Vec, off, n uint32) {
	i, o := seek(vecs, off)
	for ; n > 0; i, o = i+1, 0 {
		v := vecs[i]
		k := min(n, v.Len-o)
		var data []byte
		if v.Data != nil {
			data = v.Data[o : o+k]
		}
		mb.AddPage(data, k, v.PFN, v.Offset+o) // a part of a parent within 4 GiB: cannot fail
		n -= k
	}
}

// copyPayload copies the parent payload's bytes [off, off+len(dst)) into dst:
// the copy into the stripe cache that raid5's biodrain does. The range must lie
// within the payload, whose vectors carry data.
func copyPayload(dst []byte, vecs []blk.Vec, off uint32) {
	i, o := seek(vecs, off)
	for ; len(dst) > 0; i, o = i+1, 0 {
		n := copy(dst, vecs[i].Data[o:])
		dst = dst[n:]
	}
}

// payloadMode reports whether b's vectors carry data. Errors: ErrMixedData when
// some do and some do not. O(len(vecs)).
func payloadMode(b *blk.Bio) (data bool, err error) {
	vecs := b.Vecs()
	nData := 0
	for _, v := range vecs {
		if v.Data != nil {
			nData++
		}
	}
	if nData != 0 && nData != len(vecs) {
		return false, ErrMixedData
	}
	return nData != 0, nil
}
