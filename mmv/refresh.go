package mmv

import "bytes"

// Refresh brings f, decoded from old, up to date with data, a later
// snapshot of the same file, and reports whether it could: only when
// every byte outside the values' first sixteen (the value and its extra
// word) is as in old — the header with its generation numbers, the
// table of contents, every section but the values, and each value's
// metric and instance offsets. Then the file was not rewritten, only its
// values moved, which is what a writer does within one generation, and
// nothing of f but its values' Bits and Extra can have changed. A
// string's slot offset (its Extra) must not move either. Otherwise f is
// left in an undefined state, and data must be decoded afresh.
//
// Decoding a file of 1,000 metrics x 100 instances took most of the CPU
// of a sample (pcpmmv record: about 3 ms of 10); comparing and refreshing
// it takes about 0.5 ms.
func (f *File) Refresh(old, data []byte) bool {
	if len(data) != len(old) || len(f.Values) == 0 {
		return false
	}
	vo := f.valOff
	ve := vo + uint64(len(f.Values))*valueSize
	if ve > uint64(len(data)) || !bytes.Equal(data[:vo], old[:vo]) || !bytes.Equal(data[ve:], old[ve:]) {
		return false
	}
	for i := range f.Values {
		at := vo + uint64(i)*valueSize
		if !bytes.Equal(data[at+16:at+valueSize], old[at+16:at+valueSize]) {
			return false
		}
		v := &f.Values[i]
		bits, extra := ne.Uint64(data[at:]), int64(ne.Uint64(data[at+8:]))
		if extra != v.Extra && f.Metrics[v.Metric].Type == TypeString {
			return false
		}
		v.Bits, v.Extra = bits, extra
	}
	return true
}
