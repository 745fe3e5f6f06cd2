package dump

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// TestGrowMatchesLoad: metadata filed as it comes (grow) looks up what
// the whole metadata loaded at once does: on every QA archive, the first
// half of the descriptors and instance domain records are loaded, and
// then every record is grown in .meta order, as a stream brings them all
// again (those loaded are skipped; of the rest most come in time order:
// the appending path; others not: a full resolve), and then every PMID has the same names and
// descriptor, and every instance domain the same version, instances and
// names at each record's time and just before it.
func TestGrowMatchesLoad(t *testing.T) {
	for _, base := range qaBases(t) {
		a, err := format.Open(base, format.WithWarn(func(error) {}))
		if err != nil {
			continue // the damaged ones: loading fails either way
		}
		m, err := a.Meta()
		if err != nil {
			continue
		}
		whole := newPCPMeta(m)
		if whole.descErr != nil {
			continue
		}
		nd, ni := len(m.Descs)/2, len(m.InDoms)/2
		var head []stream.Record
		for _, d := range m.Descs[:nd] {
			head = append(head, d)
		}
		for _, r := range m.InDoms[:ni] {
			head = append(head, r)
		}
		start, err := format.MetadataOf(m.Label, head)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		d := &dumper{meta: newPCPMeta(start), startMeta: start, metrics: map[stream.PMID]*metricInfo{}, growing: true}
		for _, r := range m.Descs {
			if err := d.grow(r); err != nil {
				t.Fatalf("%s: %v", base, err)
			}
		}
		for _, r := range m.InDoms {
			if err := d.grow(r); err != nil {
				t.Fatalf("%s: %v", base, err)
			}
		}
		name := filepath.Base(base)
		for p, want := range whole.byPMID {
			got := d.meta.byPMID[p]
			if got == nil || got.Type != want.Type || got.InDom != want.InDom || got.Units != want.Units || got.Sem != want.Sem {
				t.Errorf("%s: PMID %v: descriptor %+v, want %+v", name, p, got, want)
			}
			if g, w := d.meta.names(p), whole.names(p); !slices.Equal(g, w) {
				t.Errorf("%s: PMID %v: names %q, want %q", name, p, g, w)
			}
		}
		for _, r := range m.InDoms {
			wl, gl := whole.indomsBy[r.InDom], d.meta.indomsBy[r.InDom]
			if (wl == nil) != (gl == nil) {
				t.Errorf("%s: indom %v: list %v, want %v", name, r.InDom, gl != nil, wl != nil)
				continue
			}
			if wl == nil {
				continue
			}
			for _, at := range []stream.Timestamp{r.T, r.T.Add(-1)} {
				w, g := wl.at(at), gl.at(at)
				if (w == nil) != (g == nil) || (w != nil && (!slices.Equal(w.insts, g.insts) || !slices.Equal(w.names, g.names))) {
					t.Errorf("%s: indom %v at %v: grown %v, loaded %v", name, r.InDom, at, g, w)
				}
			}
		}
	}
}
