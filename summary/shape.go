package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// The archive's shape (pcpsummary --shape), measured in the same pass as
// the statistics: what pmlogsize and `promtool tsdb analyze` tell.
//
//   - Per metric: the bytes its value sets take in the results (counted as
//     pmlogsize -d counts them: the PMID and count, then the value format,
//     the instance-value pairs and each value block rounded up to 4
//     bytes), the results it appears in, its values, its distinct
//     instances, and its churn: instances that came or went from one of
//     its results to the next.
//   - Per instance domain: the bytes of its metrics, its distinct
//     instances, its records in the metadata and their churn (instances
//     added or dropped from one record to the next).
//   - The whole: results, <mark>s, values, the window and values per
//     second.
//
// Metrics and instance domains come largest first, then the ten metrics
// that churn most. In the window only; a metric never named by -S/-T's
// records is not listed.

type shapeMetric struct {
	pmid          stream.PMID
	bytes         int64
	records       int64
	values        int64
	churn         int64
	seq           int64 // this metric's results so far
	prev          int64 // values in its last result
	last          map[int32]int64
	first, lastTS stream.Timestamp
}

type shape struct {
	metrics map[stream.PMID]*shapeMetric
	order   []*shapeMetric
	results int64
	marks   int64
	values  int64
	bytes   int64
}

func newShape() *shape { return &shape{metrics: map[stream.PMID]*shapeMetric{}} }

func (sh *shape) mark() { sh.marks++ }

// add measures one result.
func (sh *shape) add(r *stream.Result) error {
	sh.results++
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		m := sh.metrics[vs.PMID]
		if m == nil {
			m = &shapeMetric{pmid: vs.PMID, last: map[int32]int64{}}
			sh.metrics[vs.PMID] = m
			sh.order = append(sh.order, m)
		}
		m.records++
		n := int64(8)
		if vs.NumVal > 0 {
			n += 4 + 8*int64(vs.NumVal)
			m.seq++
			stayed := int64(0)
			for i := 0; i < int(vs.NumVal); i++ {
				if vs.ValFmt != stream.ValInsitu {
					blk, err := vs.Block(i)
					if err != nil {
						return err
					}
					n += int64(len(blk)+3) &^ 3
				}
				inst := vs.Inst(i)
				if s, ok := m.last[inst]; ok && s == m.seq-1 {
					stayed++
				}
				m.last[inst] = m.seq
			}
			if m.seq > 1 {
				m.churn += int64(vs.NumVal) - stayed + m.prev - stayed
			}
			m.prev = int64(vs.NumVal)
			m.values += int64(vs.NumVal)
			sh.values += int64(vs.NumVal)
		}
		m.bytes += n
		sh.bytes += n
	}
	return it.Err()
}

type shapeInDom struct {
	id                          stream.InDomID
	bytes                       int64
	metrics, instances, records int
	churn                       int64
}

// indomChurn is an instance domain's records, distinct instances, and
// the instances added or dropped from one record to the next.
func indomChurn(sets []*stream.InstanceSet) (records, instances int, churn int64) {
	seen := map[int32]bool{}
	var prev map[int32]bool
	for _, set := range sets {
		records++
		cur := map[int32]bool{}
		for _, in := range set.Insts {
			cur[in], seen[in] = true, true
		}
		if prev != nil {
			for in := range cur {
				if !prev[in] {
					churn++
				}
			}
			for in := range prev {
				if !cur[in] {
					churn++
				}
			}
		}
		prev = cur
	}
	return records, len(seen), churn
}

// print appends the shape after the summary: text, or JSON objects.
func (sh *shape) print(s *summarizer, md *format.Metadata) {
	b := s.b[:0]
	span := s.logspan
	perSec := 0.0
	if span > 0 {
		perSec = float64(sh.values) / span
	}
	ms := slices.Clone(sh.order)
	slices.SortStableFunc(ms, func(a, b *shapeMetric) int { return cmp.Compare(b.bytes, a.bytes) })
	name := func(p stream.PMID) string {
		if n := s.meta.Names(p); len(n) > 0 {
			return n[0]
		}
		return p.String()
	}
	doms := map[stream.InDomID]*shapeInDom{}
	var domOrder []*shapeInDom
	for _, m := range ms {
		d, ok := s.meta.Desc(m.pmid)
		if !ok || d.InDom == stream.InDomNull {
			continue
		}
		sd := doms[d.InDom]
		if sd == nil {
			sd = &shapeInDom{id: d.InDom}
			doms[d.InDom] = sd
			domOrder = append(domOrder, sd)
			sd.records, sd.instances, sd.churn = indomChurn(md.Resolved[d.InDom])
		}
		sd.bytes += m.bytes
		sd.metrics++
	}
	slices.SortStableFunc(domOrder, func(a, b *shapeInDom) int { return cmp.Compare(b.bytes, a.bytes) })
	share := func(n int64) float64 {
		if sh.bytes == 0 {
			return 0
		}
		return 100 * float64(n) / float64(sh.bytes)
	}
	if s.o.JSON {
		b = fmt.Appendf(b, `{"shape":"archive","results":%d,"marks":%d,"values":%d,"bytes":%d,"seconds":`, sh.results, sh.marks, sh.values, sh.bytes)
		b = appendJSONNum(b, span)
		b = append(b, `,"values_per_second":`...)
		b = appendJSONNum(b, perSec)
		b = append(b, "}\n"...)
		for _, m := range ms {
			b = append(b, `{"shape":"metric","metric":`...)
			b = strconv.AppendQuote(b, name(m.pmid))
			b = fmt.Appendf(b, `,"pmid":"%s","bytes":%d,"records":%d,"values":%d,"instances":%d,"churn":%d}`+"\n",
				m.pmid, m.bytes, m.records, m.values, len(m.last), m.churn)
		}
		for _, d := range domOrder {
			b = fmt.Appendf(b, `{"shape":"indom","indom":"%s","bytes":%d,"metrics":%d,"instances":%d,"records":%d,"churn":%d}`+"\n",
				d.id, d.bytes, d.metrics, d.instances, d.records, d.churn)
		}
		s.w.Write(b)
		s.b = b
		return
	}
	b = fmt.Appendf(b, "\nArchive shape: %d results, %d <mark>s, %d values (%s per second) in %d bytes of results\n",
		sh.results, sh.marks, sh.values, strconv.FormatFloat(perSec, 'f', 1, 64), sh.bytes)
	b = append(b, "metric bytes (share), results, values, instances, churn:\n"...)
	for _, m := range ms {
		b = fmt.Appendf(b, "  %s [%s] %d (%.1f%%), %d, %d, %d, %d\n", name(m.pmid), m.pmid, m.bytes, share(m.bytes), m.records, m.values, len(m.last), m.churn)
	}
	if len(domOrder) > 0 {
		b = append(b, "instance domain bytes (share), metrics, instances, records, churn:\n"...)
		for _, d := range domOrder {
			b = fmt.Appendf(b, "  %s %d (%.1f%%), %d, %d, %d, %d\n", d.id, d.bytes, share(d.bytes), d.metrics, d.instances, d.records, d.churn)
		}
	}
	churny := slices.Clone(ms)
	slices.SortStableFunc(churny, func(a, b *shapeMetric) int { return cmp.Compare(b.churn, a.churn) })
	if len(churny) > 10 {
		churny = churny[:10]
	}
	if len(churny) > 0 && churny[0].churn > 0 {
		b = append(b, "most churn (instances that came or went between a metric's results):\n"...)
		for _, m := range churny {
			if m.churn == 0 {
				break
			}
			b = fmt.Appendf(b, "  %s %d\n", name(m.pmid), m.churn)
		}
	}
	s.w.Write(b)
	s.b = b
}
