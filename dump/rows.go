package dump

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// SampleKind says which field of a Sample holds its value.
type SampleKind uint8

// The kinds of sample values.
const (
	SampleInt   SampleKind = iota // Int: PM_TYPE_32, PM_TYPE_64, PM_TYPE_U32
	SampleUint                    // Uint: PM_TYPE_U64
	SampleFloat                   // Float: PM_TYPE_FLOAT (Float32 set), PM_TYPE_DOUBLE
	SampleText                    // Text: strings, and as CSV prints the rest (hex, event counts)
)

// Sample is one row of the CSV view with its value typed: the same rows,
// in the same order, with the same metric and instance columns (see
// docs/dump-formats.md). Exporters that want CSV's values without
// parsing CSV use Samples.
type Sample struct {
	Time        stream.Timestamp
	PMID        stream.PMID
	Metric      string // the first name, or the PMID in PCP's notation
	HasInstance bool   // false for a metric without instances
	Inst        int32
	Instance    string // the name in force, or the number when unknown
	Kind        SampleKind
	Float32     bool // a FLOAT: Float holds a float32 exactly
	Int         int64
	Uint        uint64
	Float       float64
	Text        string
}

// Samples calls f once per CSV row of a, in CSV's order. f must not keep
// the *Sample it is given.
func Samples(a *format.Archive, opts Options, f func(*Sample) error) error {
	return samples(newArchiveSource(a), opts, f)
}

// SamplesStream is Samples of a record stream read as it arrives (see
// JSONStream; the options must be ExportStreamable).
func SamplesStream(meta *format.Metadata, it stream.Iterator, opts Options, f func(*Sample) error) error {
	return samples(newStreamSource(meta, it), opts, f)
}

func samples(src archive, opts Options, f func(*Sample) error) error {
	e, err := newExporter(nopWriter{}, src, opts)
	if err != nil {
		return err
	}
	var s Sample
	names := map[stream.PMID]string{}
	return e.each(false, func(rec stream.Record) error {
		r, ok := rec.(*stream.Result)
		if !ok {
			return nil
		}
		s.Time = r.T
		if e.sel != nil {
			for i := range e.sel.have {
				if e.sel.have[i] {
					if err := e.sampleVSet(&s, names, &e.sel.picked[i], f); err != nil {
						return err
					}
				}
			}
			return nil
		}
		it := r.VSets()
		for it.Next() {
			if err := e.sampleVSet(&s, names, it.VSet(), f); err != nil {
				return err
			}
		}
		return it.Err()
	})
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func (e *exporter) sampleVSet(s *Sample, names map[stream.PMID]string, vs *stream.VSet, f func(*Sample) error) error {
	if vs.NumVal <= 0 {
		return nil
	}
	mi := e.d.metric(vs.PMID)
	var ver *indomVersion
	if mi.indom != stream.InDomNull && mi.list != nil {
		ver = mi.list.atCached(s.Time)
	}
	name, ok := names[vs.PMID]
	if !ok {
		if len(mi.names) > 0 {
			name = mi.names[0]
		} else {
			name = string(appendPMID(nil, vs.PMID))
		}
		names[vs.PMID] = name
	}
	s.PMID, s.Metric = vs.PMID, name
	hint := 0
	var buf []byte
	for j := 0; j < int(vs.NumVal); j++ {
		inst, _ := vs.RawPair(j)
		s.Inst, s.Instance = inst, ""
		s.HasInstance = mi.indom != stream.InDomNull || mi.desc == nil && inst != stream.InstNull
		if s.HasInstance {
			iname, ok := "", false
			if mi.indom != stream.InDomNull && ver != nil {
				iname, ok = ver.nameHint(inst, &hint)
			}
			if !ok {
				iname = strconv.Itoa(int(inst))
			}
			s.Instance = iname
		}
		v, err := vs.Value(j)
		if err != nil {
			// CSV prints an empty value.
			s.Kind, s.Text = SampleText, ""
		} else {
			buf = s.set(buf[:0], mi, v)
		}
		if s.Kind == SampleText && mi.desc != nil && mi.typ.Numeric() {
			e.unreadable(s, mi.typ)
		}
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// unreadable warns, once per metric, of a value of a numeric metric that
// cannot be read as its type (damage: a value block of another type, or
// one cut short), which the sample then gives as its raw bytes' text
// (Parquet keeps it in value_text; OpenMetrics, numbers only, leaves it
// out; Options.Unreadable says which): where its result is, the metric,
// the time and the type.
func (e *exporter) unreadable(s *Sample, t stream.Type) {
	if e.unread[s.PMID] {
		return
	}
	if e.unread == nil {
		e.unread = map[stream.PMID]bool{}
	}
	e.unread[s.PMID] = true
	where := stream.Where(e.cur)
	if where != "" {
		where += ": "
	}
	fate := e.d.opts.Unreadable
	if fate == "" {
		fate = "given as the text of its bytes"
	}
	fmt.Fprintf(e.d.warn, "%s: warning: %smetric %s (%s): a value at %s cannot be read as its type (%s): %s\n",
		e.d.prog, where, s.Metric, s.PMID, s.Time, t, fate)
}

// set types v as appendCSVValue prints it.
func (s *Sample) set(buf []byte, mi *metricInfo, v stream.Value) []byte {
	s.Float32 = false
	typ := mi.typ
	text := func(b []byte) []byte {
		s.Kind, s.Text = SampleText, string(b)
		return b
	}
	if mi.desc == nil {
		return text(appendCSVRaw(buf, v))
	}
	switch typ {
	case stream.TypeEvent, stream.TypeHighresEvent, stream.TypeAggregate, stream.TypeAggStatic:
		return text(e0.appendCSVValue(buf, mi, v))
	}
	if !extractOK(typ, v.Insitu, v) {
		return text(appendCSVRaw(buf, v))
	}
	switch typ {
	case stream.TypeString:
		s.Kind, s.Text = SampleText, string(v.Bytes(stream.TypeString))
	case stream.Type32:
		s.Kind, s.Int = SampleInt, int64(int32(v.Word))
	case stream.TypeU32:
		s.Kind, s.Int = SampleInt, int64(v.Word)
	case stream.Type64:
		s.Kind, s.Int = SampleInt, int64(binary.BigEndian.Uint64(v.Payload))
	case stream.TypeU64:
		s.Kind, s.Uint = SampleUint, binary.BigEndian.Uint64(v.Payload)
	case stream.TypeFloat:
		w := v.Word
		if !v.Insitu {
			w = binary.BigEndian.Uint32(v.Payload)
		}
		s.Kind, s.Float, s.Float32 = SampleFloat, float64(math.Float32frombits(w)), true
	case stream.TypeDouble:
		s.Kind, s.Float = SampleFloat, math.Float64frombits(binary.BigEndian.Uint64(v.Payload))
	default:
		return text(appendCSVRaw(buf, v))
	}
	return buf
}

// e0 gives appendCSVValue a receiver; it uses none of its fields.
var e0 exporter
