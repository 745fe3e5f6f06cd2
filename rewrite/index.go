package rewrite

import (
	"github.com/pcptools/pcptools/format"
)

// indexPlacer writes pmlogrewrite's temporal index with the archive: the
// Rewriter's IndexHints say at which data record (and after which
// metadata record) an entry goes, and the writer says where each record
// lands as it writes it (format.WriterOptions.RecordHook), so the entries
// are known before the archive is closed and the archive is renamed into
// place whole, index included. (It used to be written by the writer with
// the writer's own index, then walked record by record to find the
// offsets, and its .index replaced: a second pass over every file, and an
// archive in place with the wrong index for a moment.)
//
// A hint names records by number; the hint for data record n is made
// before n is written, so the hook keeps only the offsets some hint asks
// for. The last data record's position is kept too: the final hint names
// it after it was written. A hint whose record never comes points at the
// end of the files, as pmlogrewrite's does.
type indexPlacer struct {
	rw       *Rewriter
	metaAt   map[int64]int64
	dataAt   map[int64]dataPos
	last     dataPos
	lastN    int64
	mi, di   int // the first hints not yet matched to a record
	haveLast bool
}

type dataPos struct {
	vol int32
	off int64
}

func newIndexPlacer(rw *Rewriter) *indexPlacer {
	return &indexPlacer{rw: rw, metaAt: map[int64]int64{}, dataAt: map[int64]dataPos{}}
}

// hook is the writer's RecordHook.
func (p *indexPlacer) hook(meta bool, n int64, vol int32, off int64) {
	hints := p.rw.hints
	if meta {
		for p.mi < len(hints) && int64(hints[p.mi].Meta) < n {
			p.mi++
		}
		if p.mi < len(hints) && int64(hints[p.mi].Meta) == n {
			p.metaAt[n] = off
		}
		return
	}
	p.last, p.lastN, p.haveLast = dataPos{vol, off}, n, true
	for p.di < len(hints) && int64(hints[p.di].Data) < n {
		p.di++
	}
	if p.di < len(hints) && int64(hints[p.di].Data) == n {
		p.dataAt[n] = dataPos{vol, off}
	}
}

// addEntries gives w the index entries of every hint so far.
func (p *indexPlacer) addEntries(w *format.Writer) error {
	vol, metaEnd, dataEnd, err := w.Offsets()
	if err != nil {
		return err
	}
	for _, h := range p.rw.hints {
		d, ok := p.dataAt[int64(h.Data)]
		if !ok {
			d = dataPos{vol, dataEnd}
			if p.haveLast && int64(h.Data) == p.lastN {
				d = p.last
			}
		}
		m, ok := p.metaAt[int64(h.Meta)]
		if h.Meta < 0 || !ok {
			m = metaEnd
		}
		w.AddIndex(format.IndexEntry{T: h.T, Vol: d.vol, MetaOff: m, DataOff: d.off})
	}
	return nil
}
