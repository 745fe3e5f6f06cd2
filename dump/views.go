package dump

import (
	"github.com/pcptools/pcptools/internal/pcphash"

	"sort"
	"strconv"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// The metadata views of pmdumplog: -l/-L, -d, -e, -h, -I, -i and -t.

// dumpLabel prints the archive label (-l), with -L the timezone, zoneinfo,
// feature bits and pmlogger's PID.
func (d *dumper) dumpLabel() error {
	tr := d.opts.TraceLog
	tr.End() // pmdumplog looks the end up again
	l := d.lab
	b := d.b
	b = append(b, "Log Label (Log Format Version "...)
	b = strconv.AppendInt(b, int64(d.vers), 10)
	b = append(b, ")\nPerformance metrics from host "...)
	b = append(b, l.Hostname...)
	b = append(b, "\n    commencing "...)
	b = d.tcache.appendDate(b, l.Start, d.prec)
	if d.opts.TimeFormat >= 3 {
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(l.Start.Sec), 10)
	}
	b = append(b, '\n')
	end, ok, err := d.archiveEnd()
	if err != nil {
		return err
	}
	if !ok {
		b = append(b, "    ending     UNKNOWN\n"...)
	} else {
		b = append(b, "    ending     "...)
		b = d.tcache.appendDate(b, end, d.prec)
		if d.opts.TimeFormat >= 3 {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(end.Sec), 10)
		}
		b = append(b, '\n')
	}
	if d.opts.LabelVerbose {
		if l.Timezone != "" {
			b = append(b, "Archive timezone: "...)
			b = append(b, l.Timezone...)
			b = append(b, '\n')
		}
		if l.Zoneinfo != "" {
			b = append(b, "Archive zoneinfo: "...)
			b = append(b, l.Zoneinfo...)
			b = append(b, '\n')
		}
		if l.Features != 0 {
			b = append(b, "Archive features: 0x"...)
			b = appendHex(b, l.Features)
			if unknown := l.Features &^ format.FeatureQA; unknown != 0 {
				b = append(b, " [unknown: "...)
				b = appendFeatureBits(b, unknown)
				b = append(b, ']')
			}
			b = append(b, '\n')
		}
		b = append(b, "PID for pmlogger: "...)
		b = strconv.AppendInt(b, int64(l.PID), 10)
		b = append(b, '\n')
	}
	d.b = b
	d.flush()
	return nil
}

// appendFeatureBits names feature bits from the highest: "QA" for bit 31,
// "bit_NN" for the others, separated by spaces.
func appendFeatureBits(dst []byte, f uint32) []byte {
	first := true
	for pos := 31; pos >= 0; pos-- {
		if f&(1<<uint(pos)) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ' ')
		}
		first = false
		if pos == 31 {
			dst = append(dst, "QA"...)
		} else {
			dst = append(dst, "bit_"...)
			dst = appendPadInt(dst, int64(pos), 2)
		}
	}
	return dst
}

// archiveEnd finds the time of the archive's last record, as libpcp's
// __pmGetArchiveEnd does (format.Archive.End, which remembers it).
func (d *dumper) archiveEnd() (stream.Timestamp, bool, error) {
	if tr := d.opts.TraceLog; tr != nil {
		// libpcp's reading: the end its search finds, or none
		end, ok := tr.EndTime()
		return end, ok, nil
	}
	return d.a.end()
}

// dumpDescs prints the descriptors (-d) in libpcp's hash table order.
func (d *dumper) dumpDescs() {
	d.b = append(d.b, "\nDescriptions for Metrics in the Log ...\n"...)
	d.meta.descs.Walk(func(n *pcphash.Node[*stream.Desc]) {
		desc := n.Data
		b := append(d.b, "PMID: "...)
		b = appendPMID(b, desc.PMID)
		b = append(b, " ("...)
		if names := d.meta.names(desc.PMID); len(names) == 0 {
			b = append(b, "<noname>"...)
		} else {
			b = appendNames(b, names)
		}
		b = append(b, ")\n"...)
		d.b = AppendDesc(b, desc)
		d.maybeFlush()
	})
	d.flush()
}

// AppendDesc appends a descriptor as pmPrintDesc prints it.
func AppendDesc(b []byte, desc *stream.Desc) []byte {
	if desc.Type == stream.TypeNoSupport {
		return append(b, "    Data Type: Not Supported\n"...)
	}
	b = append(b, "    Data Type: "...)
	if s := typeDescription(desc.Type); s != "" {
		b = append(b, s...)
	} else {
		b = append(b, "??? ("...)
		b = strconv.AppendInt(b, int64(desc.Type), 10)
		b = append(b, ')')
	}
	b = append(b, "  InDom: "...)
	b = appendInDom(b, desc.InDom)
	b = append(b, " 0x"...)
	b = appendHex(b, uint32(desc.InDom))
	b = append(b, "\n    Semantics: "...)
	switch desc.Sem {
	case stream.SemCounter:
		b = append(b, "counter"...)
	case stream.SemInstant:
		b = append(b, "instant"...)
	case stream.SemDiscrete:
		b = append(b, "discrete"...)
	default:
		b = append(b, "??? ("...)
		b = strconv.AppendInt(b, int64(desc.Sem), 10)
		b = append(b, ')')
	}
	b = append(b, "  Units: "...)
	if u := desc.Units.String(); u == "" {
		b = append(b, "none"...)
	} else {
		b = append(b, u...)
	}
	return append(b, '\n')
}

func typeDescription(t stream.Type) string {
	switch t {
	case stream.Type32:
		return "32-bit int"
	case stream.TypeU32:
		return "32-bit unsigned int"
	case stream.Type64:
		return "64-bit int"
	case stream.TypeU64:
		return "64-bit unsigned int"
	case stream.TypeFloat:
		return "float"
	case stream.TypeDouble:
		return "double"
	case stream.TypeString:
		return "string"
	case stream.TypeAggregate:
		return "aggregate"
	case stream.TypeAggStatic:
		return "static aggregate"
	case stream.TypeEvent:
		return "event record array"
	case stream.TypeHighresEvent:
		return "highres event record array"
	}
	return ""
}

// dumpLabelSets prints the label sets (-e): grouped by time, then in the
// order context, domain, cluster, item, instance domain, instances, then
// by identifier.
func (d *dumper) dumpLabelSets() {
	d.b = append(d.b, "\nMetric Labels in the Log ...\n"...)
	order := []uint32{stream.LabelContext, stream.LabelDomain, stream.LabelCluster,
		stream.LabelItem, stream.LabelInDom, stream.LabelInstances}
	var prev stream.Timestamp // libpcp starts from time zero
	for {
		// Find the earliest time after prev. libpcp compares times as
		// doubles of their difference, which is exact for any two
		// distinct timestamps an archive can hold.
		var this stream.Timestamp
		found := false
		d.meta.labels.Walk(func(tn *pcphash.Node[*pcphash.Hash[*labelVersion]]) {
			tn.Data.Walk(func(n *pcphash.Node[*labelVersion]) {
				for v := n.Data; v != nil; v = v.next {
					if !v.stamp.After(prev) {
						break
					}
					if !found || v.stamp.Before(this) {
						this, found = v.stamp, true
					}
				}
			})
		})
		if !found {
			break
		}
		d.b = d.appendStamp(d.b, this)
		d.b = append(d.b, '\n')
		for _, typ := range order {
			tn := d.meta.labels.Search(typ)
			if tn == nil {
				continue
			}
			for _, n := range labelNodesInOrder(typ, tn.Data) {
				for v := n.Data; v != nil; v = v.next {
					if v.stamp != this {
						continue
					}
					d.b = AppendLabelSets(d.b, n.Key, typ, v.sets)
				}
			}
			d.maybeFlush()
		}
		prev = this
	}
	d.flush()
}

// labelNodesInOrder lists the identifiers of one label type as pmdumplog
// visits them: context labels along their one hash chain, the others by
// increasing identifier (a later node with an identifier already visited
// is skipped, as pmdumplog's "next larger" search does).
func labelNodesInOrder(typ uint32, h *pcphash.Hash[*labelVersion]) []*pcphash.Node[*labelVersion] {
	var out []*pcphash.Node[*labelVersion]
	if typ == stream.LabelContext {
		return h.FirstChain()
	}
	var prev *pcphash.Node[*labelVersion]
	for {
		var this *pcphash.Node[*labelVersion]
		h.Walk(func(n *pcphash.Node[*labelVersion]) {
			if prev != nil && n.Key <= prev.Key {
				return
			}
			if this == nil || n.Key < this.Key {
				this = n
			}
		})
		if this == nil {
			return out
		}
		out = append(out, this)
		prev = this
	}
}

// AppendLabelSets appends label sets as pmPrintLabelSets does.
func AppendLabelSets(b []byte, ident uint32, typ uint32, sets []stream.OneLabelSet) []byte {
	for _, s := range sets {
		b = append(b, "    "...)
		b = appendLabelIdent(b, ident, typ)
		if typ&stream.LabelInstances != 0 {
			b = append(b, '[')
			b = strconv.AppendUint(b, uint64(uint32(s.Inst)), 10)
			b = append(b, ']')
		}
		b = append(b, " labels ("...)
		b = strconv.AppendUint(b, uint64(len(s.JSON)), 10)
		b = append(b, " bytes): "...)
		js := s.JSON
		for i := 0; i < len(js); i++ {
			if js[i] == 0 {
				js = js[:i]
				break
			}
		}
		b = append(b, js...)
		b = append(b, '\n')
		for i, l := range s.Labels {
			b = append(b, "        ["...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, "] name("...)
			b = strconv.AppendInt(b, int64(l.Name), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(l.NameLen), 10)
			b = append(b, ") : value("...)
			b = strconv.AppendInt(b, int64(l.Value), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(l.ValueLen), 10)
			b = append(b, ") ["...)
			b = appendLabelFlags(b, l.Flags)
			b = append(b, "]\n"...)
		}
	}
	return b
}

func appendLabelIdent(b []byte, ident, typ uint32) []byte {
	switch typ & stream.LabelTypeMask {
	case stream.LabelDomain:
		b = append(b, "Domain "...)
		return strconv.AppendUint(b, uint64(ident), 10)
	case stream.LabelInDom, stream.LabelInstances:
		b = append(b, "InDom "...)
		return appendInDom(b, stream.InDomID(ident))
	case stream.LabelCluster:
		b = append(b, "Cluster "...)
		s := appendPMID(nil, stream.PMID(ident))
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] == '.' {
				s = s[:i]
				break
			}
		}
		return append(b, s...)
	case stream.LabelItem:
		b = append(b, "PMID "...)
		return appendPMID(b, stream.PMID(ident))
	case stream.LabelContext:
		return append(b, "Context"...)
	}
	return b
}

func appendLabelFlags(b []byte, flags uint8) []byte {
	switch uint32(flags) & stream.LabelTypeMask {
	case stream.LabelContext:
		b = append(b, "context"...)
	case stream.LabelDomain:
		b = append(b, "domain"...)
	case stream.LabelInDom:
		b = append(b, "indom"...)
	case stream.LabelCluster:
		b = append(b, "cluster"...)
	case stream.LabelItem:
		b = append(b, "pmid"...)
	case stream.LabelInstances:
		b = append(b, "instances"...)
	default:
		b = append(b, '?')
	}
	if flags&stream.LabelCompound != 0 {
		b = append(b, ",compound"...)
	}
	if flags&stream.LabelOptional != 0 {
		b = append(b, ",optional"...)
	}
	return b
}

// dumpHelpText prints help text (-h): metrics then instance domains, each
// by increasing identifier, one-line text before the long text.
func (d *dumper) dumpHelpText() {
	d.b = append(d.b, "\nMetric Help Text in the Log ...\n"...)
	for _, kind := range []uint32{stream.TextPMID, stream.TextInDom} {
		var idents []uint32
		seen := map[uint32]bool{}
		for k := range d.meta.texts {
			if (k.typ == kind|stream.TextOneline || k.typ == kind|stream.TextHelp) && !seen[k.ident] {
				seen[k.ident] = true
				idents = append(idents, k.ident)
			}
		}
		sortUint32(idents)
		for _, id := range idents {
			for _, class := range []uint32{stream.TextOneline, stream.TextHelp} {
				text, ok := d.meta.texts[textKey{kind | class, id}]
				if !ok {
					continue
				}
				if kind == stream.TextPMID {
					d.b = append(d.b, "PMID: "...)
					d.b = appendPMID(d.b, stream.PMID(id))
				} else {
					d.b = append(d.b, "InDom: "...)
					d.b = appendInDom(d.b, stream.InDomID(id))
				}
				if class == stream.TextOneline {
					d.b = append(d.b, " ["...)
					d.b = append(d.b, text...)
					d.b = append(d.b, ']')
				} else {
					d.b = append(d.b, '\n')
					d.b = append(d.b, text...)
				}
				d.b = append(d.b, '\n')
				d.maybeFlush()
			}
		}
	}
	d.flush()
}

// dumpDiskInDoms prints the instance domain records as they are in the
// .meta file (-I), deltas included.
func (d *dumper) dumpDiskInDoms(m *format.Metadata) {
	d.b = append(d.b, "\nInstance Domains on-disk ...\n"...)
	for _, r := range m.InDoms {
		b := d.appendStamp(d.b, r.T)
		b = append(b, " InDom: "...)
		b = appendInDom(b, r.InDom)
		delta := r.Encoding == stream.InDomDelta
		if delta {
			b = append(b, " delta"...)
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(r.Insts)), 10)
		b = append(b, " instances\n"...)
		for i, inst := range r.Insts {
			switch {
			case delta && r.Deleted != nil && r.Deleted[i]:
				b = append(b, "   del "...)
				b = strconv.AppendInt(b, int64(inst), 10)
				b = append(b, '\n')
				continue
			case delta:
				b = append(b, "   add "...)
			default:
				b = append(b, "   "...)
			}
			b = strconv.AppendInt(b, int64(inst), 10)
			b = append(b, " or \""...)
			b = append(b, r.Names[i]...)
			b = append(b, "\"\n"...)
		}
		d.b = b
		d.maybeFlush()
	}
	d.flush()
}

// dumpInDoms prints every version of every instance domain (-i), deltas
// resolved, domains in hash table order, versions oldest first.
func (d *dumper) dumpInDoms() {
	d.b = append(d.b, "\nInstance Domains in the Log ...\n"...)
	d.meta.indoms.Walk(func(n *pcphash.Node[*indomList]) {
		l := n.Data
		b := append(d.b, "InDom: "...)
		b = appendInDom(b, l.id)
		b = append(b, '\n')
		for _, v := range l.chrono {
			b = d.appendStamp(b, v.stamp)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(v.insts)), 10)
			b = append(b, " instances\n"...)
			for i, inst := range v.insts {
				b = append(b, "   "...)
				b = strconv.AppendInt(b, int64(inst), 10)
				b = append(b, " or \""...)
				b = append(b, v.names[i]...)
				b = append(b, "\"\n"...)
			}
			d.b = b
			d.maybeFlush()
			b = d.b
		}
		d.b = b
	})
	d.flush()
}

// dumpIndex prints the temporal index (-t) with pmdumplog's integrity
// checks against the sizes of the files on disk.
func (d *dumper) dumpIndex() error {
	idx, err := d.a.index()
	if err != nil {
		idx = nil // libpcp runs without an index it cannot read
	}
	b := append(d.b, "\nTemporal Index\n"...)
	if d.opts.TimeFormat >= 1 {
		b = append(b, "\t\t"...)
	}
	if d.opts.TimeFormat >= 2 {
		b = append(b, "\t\t"...)
	}
	if d.vers == 3 {
		b = append(b, '\t')
	}
	b = append(b, "\t\tLog Vol    end(meta)     end(log)\n"...)
	var metaSize, logSize int64 = -1, -1
	for i, e := range idx {
		b = d.appendStamp(b, e.T)
		b = append(b, "\t  "...)
		b = appendRightInt(b, int64(e.Vol), 5)
		b = append(b, "  "...)
		b = appendRightInt(b, e.MetaOff, 11)
		b = append(b, "  "...)
		b = appendRightInt(b, e.DataOff, 11)
		b = append(b, '\n')
		if i == 0 {
			d.opts.TraceLog.Stat("meta")
			if n, ok := d.a.fileSize("meta"); ok {
				metaSize = n
			} else {
				metaSize = -1
			}
		}
		if i == 0 || e.Vol != idx[i-1].Vol {
			d.opts.TraceLog.Stat(strconv.Itoa(int(e.Vol)))
			if n, ok := d.a.fileSize(strconv.Itoa(int(e.Vol))); ok {
				logSize = n
			} else {
				logSize = -1
				b = append(b, "\t\tWarning: file missing for log volume "...)
				b = strconv.AppendInt(b, int64(e.Vol), 10)
				b = append(b, '\n')
			}
		}
		if e.T.Sec < 0 || e.T.Nsec < 0 || e.T.Nsec > 999999999 {
			b = append(b, "\t\tError: illegal timestamp value ("...)
			b = strconv.AppendInt(b, e.T.Sec, 10)
			b = append(b, " sec, "...)
			b = strconv.AppendInt(b, int64(e.T.Nsec), 10)
			b = append(b, " nsec)\n"...)
		}
		if metaSize != -1 && e.MetaOff > metaSize {
			b = append(b, "\t\tError: offset to meta file past end of file ("...)
			b = strconv.AppendInt(b, metaSize, 10)
			b = append(b, ")\n"...)
		}
		if logSize != -1 && e.DataOff > logSize {
			b = append(b, "\t\tError: offset to log file past end of file ("...)
			b = strconv.AppendInt(b, logSize, 10)
			b = append(b, ")\n"...)
		}
		if i > 0 {
			last := idx[i-1]
			if e.T.Before(last.T) {
				b = append(b, "\t\tError: timestamp went backwards in time "...)
				b = d.appendShortStamp(b, last.T)
				b = append(b, " -> "...)
				b = d.appendShortStamp(b, e.T)
				b = append(b, '\n')
			}
			if e.Vol < last.Vol {
				b = append(b, "\t\tError: volume number decreased\n"...)
			}
			if e.Vol == last.Vol && e.MetaOff < last.MetaOff {
				b = append(b, "\t\tError: offset to meta file decreased\n"...)
			}
			if e.Vol == last.Vol && e.DataOff < last.DataOff {
				b = append(b, "\t\tError: offset to log file decreased\n"...)
			}
		}
		d.b = b
		d.maybeFlush()
		b = d.b
	}
	d.b = b
	d.flush()
	return nil
}

func sortUint32(s []uint32) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }
