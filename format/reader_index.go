package format

import (
	"fmt"
	"io"
	"slices"

	"github.com/pcptools/pcptools/stream"
)

// maxIndexWarnings bounds the problems reported for one index.
const maxIndexWarnings = 10

// Index returns the temporal index as it is on disk (every whole entry, in
// file order), or nil when the archive has no usable one (none, or one
// whose label Open rejected with a warning). It is loaded once.
// Problems in it (a partial entry, impossible timestamps or offsets,
// values that go backwards, missing volumes) are reported as warnings,
// and make Records(From(t)) scan instead of seeking; the error is for an
// index that cannot be read at all.
func (a *Archive) Index() ([]IndexEntry, error) {
	a.indexMu.Lock()
	defer a.indexMu.Unlock()
	a.loadIndex()
	return slices.Clone(a.index), a.indexErr
}

// IndexUnsound reports whether the archive has a temporal index that is
// not sound enough to seek with (entries out of order, past their volume,
// or inside a record, as checkIndex finds): libpcp seeks with it anyway.
func (a *Archive) IndexUnsound() bool {
	a.indexMu.Lock()
	defer a.indexMu.Unlock()
	a.loadIndex()
	return a.indexPath != "" && !a.indexOK
}

// seekEntry returns the latest index entry strictly before t, when the
// index is sound. (Strictly: records at an entry's own time may lie before
// its offset when several share a timestamp.)
func (a *Archive) seekEntry(t stream.Timestamp) (IndexEntry, bool) {
	a.indexMu.Lock()
	defer a.indexMu.Unlock()
	a.loadIndex()
	if !a.indexOK {
		return IndexEntry{}, false
	}
	i, _ := slices.BinarySearchFunc(a.index, t, func(e IndexEntry, t stream.Timestamp) int {
		if e.T.Before(t) {
			return -1
		}
		return 1
	})
	if i == 0 {
		return IndexEntry{}, false
	}
	return a.index[i-1], true
}

func (a *Archive) loadIndex() {
	if a.indexRan {
		return
	}
	a.indexRan = true
	if a.indexPath == "" {
		return
	}
	f, err := openFile(a.indexPath)
	if err != nil {
		a.indexErr = err
		return
	}
	defer f.Close()
	if _, err := readLabel(f, a.indexPath, -2); err != nil {
		a.indexErr = err
		return
	}
	// ReadAll grows with what the file delivers, not with any size field.
	b, err := io.ReadAll(f)
	if err != nil {
		a.indexErr = &FormatError{File: a.indexPath, Offset: int64(LabelSize(a.label.Version)), Msg: "read failed", Err: err}
		return
	}
	v := a.label.Version
	es, ls := IndexEntrySize(v), int64(LabelSize(v))
	n := len(b) / es
	a.index = make([]IndexEntry, n)
	for i := range a.index {
		a.index[i] = DecodeIndexEntry(b[i*es:], v)
	}
	bad := a.checkIndex(ls, int64(es))
	if r := len(b) % es; r != 0 {
		bad++
		a.warnf(&FormatError{File: a.indexPath, Offset: ls + int64(n*es), Msg: fmt.Sprintf("index ends with a partial entry (%d of %d bytes)", r, es)})
	}
	a.indexOK = bad == 0 && n > 0
}

// checkIndex reports what is wrong with the entries (as pmlogcheck's
// pass 1 does) and returns the number of problems.
func (a *Archive) checkIndex(ls, es int64) int {
	volSize := map[int32]int64{}
	for _, v := range a.vols {
		volSize[int32(v.num)] = v.size
	}
	bad := 0
	report := func(i int, format string, args ...any) {
		bad++
		if bad <= maxIndexWarnings {
			msg := fmt.Sprintf("index entry %d: ", i) + fmt.Sprintf(format, args...)
			if bad == maxIndexWarnings {
				msg += " (further index problems not reported)"
			}
			a.warnf(&FormatError{File: a.indexPath, Offset: ls + int64(i)*es, Msg: msg})
		}
	}
	for i, e := range a.index {
		if e.T.Sec < 0 || e.T.Nsec < 0 || e.T.Nsec >= 1e9 {
			report(i, "impossible timestamp (%d s, %d ns)", e.T.Sec, e.T.Nsec)
		} else if e.T.Before(a.label.Start) {
			report(i, "timestamp %s precedes the label's start time %s", e.T, a.label.Start)
		}
		size, haveVol := volSize[e.Vol]
		switch {
		case e.Vol < 0:
			report(i, "negative volume number %d", e.Vol)
		case !haveVol:
			report(i, "volume %d does not exist", e.Vol)
		case e.DataOff < ls || e.DataOff > size:
			report(i, "data offset %d outside volume %d (%d bytes, label %d)", e.DataOff, e.Vol, size, ls)
		}
		if e.MetaOff < ls || e.MetaOff > a.metaSize {
			report(i, "metadata offset %d outside the .meta file (%d bytes, label %d)", e.MetaOff, a.metaSize, ls)
		}
		if i == 0 {
			continue
		}
		p := a.index[i-1]
		if e.T.Before(p.T) {
			report(i, "timestamp %s goes back from %s", e.T, p.T)
		}
		if e.Vol < p.Vol {
			report(i, "volume number goes back from %d to %d", p.Vol, e.Vol)
		} else if e.Vol == p.Vol && e.DataOff < p.DataOff {
			report(i, "data offset goes back from %d to %d", p.DataOff, e.DataOff)
		}
		if e.MetaOff < p.MetaOff {
			report(i, "metadata offset goes back from %d to %d", p.MetaOff, e.MetaOff)
		}
	}
	return bad
}
