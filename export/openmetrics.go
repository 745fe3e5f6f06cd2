package export

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// OpenMetrics writes the numeric values of a as OpenMetrics text, one
// metric family per PCP metric (docs/export.md has the name mapping).
// The format wants each family's samples together, so they are gathered
// in memory first, each family's text compressed as it grows (family.seal:
// the labels repeat on every line; a QA archive whose text is 4.6 GB took
// 7.7-8.6 GB of memory uncompressed, 1.07 GB so). It returns the number
// of samples written and of values skipped (strings,
// aggregates, events: OpenMetrics has numbers only; and a series' second
// value in one millisecond).
func OpenMetrics(w io.Writer, src *Source, opts dump.Options) (samples, skipped int64, err error) {
	meta, host := src.meta, src.host
	opts.Unreadable = "left out" // numbers only: a value given as text is skipped
	fams := map[stream.PMID]*family{}
	// Prometheus keeps milliseconds: of two samples of one series in one
	// millisecond, promtool would keep one; so do we, the first.
	type series struct {
		pmid stream.PMID
		inst int32
	}
	// Per series: the millisecond of its last sample, its PCP labels, and
	// its samples' text up to the value (name and labels, made once: the
	// instance's name, iname, is the one it was made with).
	type seriesState struct {
		ms     int64
		labels [][2]string
		prefix []byte
		iname  string
	}
	states := map[series]*seriesState{}
	pcpLabels := newSeriesLabels(meta)
	var order []*family
	z, err := newTextZ()
	if err != nil {
		return 0, 0, err
	}
	defer z.close()
	err = src.samples(opts, func(s *dump.Sample) error {
		f := fams[s.PMID]
		if f == nil {
			f = newFamily(s, meta)
			f.z = z
			fams[s.PMID] = f
			order = append(order, f)
		}
		if s.Kind == dump.SampleText {
			skipped++
			return nil
		}
		k := series{s.PMID, s.Inst}
		ms := floorDiv(s.Time.Sec*1e9+int64(s.Time.Nsec), 1e6)
		st := states[k]
		if st == nil {
			st = &seriesState{labels: pcpLabels.promLabels(s.PMID, meta.ByPMID[s.PMID], s.Inst, s.HasInstance)}
			states[k] = st
		} else if st.ms == ms {
			skipped++
			return nil
		}
		st.ms = ms
		if st.prefix == nil || st.iname != s.Instance {
			p := append(st.prefix[:0], f.sample...)
			p = append(p, `{hostname="`...)
			p = appendLabelValue(p, host)
			if s.HasInstance {
				p = append(p, `",instname="`...)
				p = appendLabelValue(p, s.Instance)
				p = append(p, `",instid="`...)
				p = strconv.AppendInt(p, int64(s.Inst), 10)
			}
			p = append(p, '"')
			for _, l := range st.labels {
				p = append(p, ',')
				p = append(p, l[0]...)
				p = append(p, `="`...)
				p = appendLabelValue(p, l[1])
				p = append(p, '"')
			}
			st.prefix, st.iname = append(p, "} "...), s.Instance
		}
		b := append(f.b, st.prefix...)
		switch s.Kind {
		case dump.SampleInt:
			b = strconv.AppendInt(b, s.Int, 10)
		case dump.SampleUint:
			b = strconv.AppendUint(b, s.Uint, 10)
		case dump.SampleFloat:
			b = appendOMFloat(b, s.Float, s.Float32)
		}
		b = append(b, ' ')
		b = appendSeconds(b, s.Time)
		b = append(b, '\n')
		f.b = b
		if len(b) >= textChunk {
			f.seal()
		}
		samples++
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	sort.SliceStable(order, func(i, j int) bool { return order[i].name < order[j].name })
	seen := map[string]bool{}
	for _, f := range order {
		if f.empty() || seen[f.name] {
			// Two PCP names that map to one Prometheus name: the
			// second would be a repeated family, which the format
			// forbids; its samples go under the first's header.
			if err := f.writeTo(bw); err != nil {
				return 0, 0, err
			}
			continue
		}
		seen[f.name] = true
		bw.WriteString(f.head)
		if err := f.writeTo(bw); err != nil {
			return 0, 0, err
		}
	}
	bw.WriteString("# EOF\n")
	return samples, skipped, bw.Flush()
}

type family struct {
	name   string // the family's name
	sample string // the samples' name: name, or name_total for counters
	head   string // # TYPE, # HELP
	// The samples' text: sealed holds the first chunks, each of about
	// textChunk bytes, compressed one after the other (their compressed
	// lengths in sizes); b, the text after them.
	b      []byte
	sealed []byte
	sizes  []int
	z      *textZ
}

// textChunk is how much of a family's text is gathered before it is
// compressed. On QA archive 20180416.10.00 (4.6 GB of text) 64 KiB
// chunks compress about 17 to 1 (270 MB kept).
const textChunk = 64 << 10

func (f *family) empty() bool { return len(f.b) == 0 && len(f.sizes) == 0 }

// seal compresses the text gathered so far onto the family's sealed chunks.
func (f *family) seal() {
	n := len(f.sealed)
	f.sealed = f.z.enc.EncodeAll(f.b, f.sealed)
	f.sizes = append(f.sizes, len(f.sealed)-n)
	f.b = f.b[:0]
}

// writeTo writes the family's samples: the sealed chunks, decompressed,
// then the rest.
func (f *family) writeTo(w io.Writer) error {
	off := 0
	for _, n := range f.sizes {
		var err error
		f.z.buf, err = f.z.dec.DecodeAll(f.sealed[off:off+n], f.z.buf[:0])
		if err != nil {
			return err // (our own compression: not expected)
		}
		if _, err := w.Write(f.z.buf); err != nil {
			return err
		}
		off += n
	}
	f.sealed, f.sizes = nil, nil
	_, err := w.Write(f.b)
	return err
}

// textZ compresses and decompresses the families' text chunks: zstd at
// its fastest level (the text is labels repeated line after line).
type textZ struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
	buf []byte
}

func newTextZ() (*textZ, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		enc.Close()
		return nil, err
	}
	return &textZ{enc: enc, dec: dec}, nil
}

func (z *textZ) close() {
	z.enc.Close()
	z.dec.Close()
}

func newFamily(s *dump.Sample, meta *format.Metadata) *family {
	f := &family{name: PromName(s.Metric)}
	f.sample = f.name
	typ := "gauge"
	var help string
	if d := meta.ByPMID[s.PMID]; d != nil {
		if d.Sem == stream.SemCounter {
			typ, f.sample = "counter", f.name+"_total"
		}
	}
	for _, t := range meta.Texts {
		if t.Type == stream.TextPMID|stream.TextOneline && t.Ident == uint32(s.PMID) {
			help = t.Text
		}
	}
	h := "# TYPE " + f.name + " " + typ + "\n"
	if help != "" {
		h += "# HELP " + f.name + " " + escapeHelp(help) + "\n"
	}
	f.head = h
	return f
}

// PromName maps a PCP metric name to a Prometheus one: every character
// outside [a-zA-Z0-9_] (the dots, mostly) becomes '_', and a name that
// starts with a digit gets a leading '_'. A counter's samples then take
// the suffix _total; a name that already ends in _total loses it for the
// family.
func PromName(pcp string) string {
	var sb strings.Builder
	for i := 0; i < len(pcp); i++ {
		c := pcp[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && c >= '0' && c <= '9' {
			sb.WriteByte('_')
		}
		if !ok {
			c = '_'
		}
		sb.WriteByte(c)
	}
	n := sb.String()
	if n == "" {
		return "_"
	}
	return strings.TrimSuffix(n, "_total")
}

func appendLabelValue(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

func appendOMFloat(b []byte, f float64, f32 bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	bits := 64
	if f32 {
		bits = 32
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendSeconds appends t as seconds since the epoch with nine decimals.
func appendSeconds(b []byte, t stream.Timestamp) []byte {
	ns := t.Sec*1e9 + int64(t.Nsec)
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1e9, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, ns%1e9+1e9, 10)
	return append(b, frac[1:]...)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
