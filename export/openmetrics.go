package export

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/dump"
	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// OpenMetrics writes the numeric values of a as OpenMetrics text, one
// metric family per PCP metric (docs/export.md has the name mapping).
// The format wants each family's samples together, so they are gathered
// in memory first: the text is about the size of pcpcat --csv's. It
// returns the number of samples written and of values skipped (strings,
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
	// Per series: the millisecond of its last sample, and its PCP labels.
	type seriesState struct {
		ms     int64
		labels [][2]string
	}
	states := map[series]*seriesState{}
	pcpLabels := newSeriesLabels(meta)
	var order []*family
	err = src.samples(opts, func(s *dump.Sample) error {
		f := fams[s.PMID]
		if f == nil {
			f = newFamily(s, meta)
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
		b := f.b
		b = append(b, f.sample...)
		b = append(b, `{hostname="`...)
		b = appendLabelValue(b, host)
		if s.HasInstance {
			b = append(b, `",instname="`...)
			b = appendLabelValue(b, s.Instance)
			b = append(b, `",instid="`...)
			b = strconv.AppendInt(b, int64(s.Inst), 10)
		}
		b = append(b, '"')
		for _, l := range st.labels {
			b = append(b, ',')
			b = append(b, l[0]...)
			b = append(b, `="`...)
			b = appendLabelValue(b, l[1])
			b = append(b, '"')
		}
		b = append(b, "} "...)
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
		if len(f.b) == 0 || seen[f.name] {
			// Two PCP names that map to one Prometheus name: the
			// second would be a repeated family, which the format
			// forbids; its samples go under the first's header.
			if len(f.b) > 0 {
				bw.Write(f.b)
			}
			continue
		}
		seen[f.name] = true
		bw.WriteString(f.head)
		bw.Write(f.b)
	}
	bw.WriteString("# EOF\n")
	return samples, skipped, bw.Flush()
}

type family struct {
	name   string // the family's name
	sample string // the samples' name: name, or name_total for counters
	head   string // # TYPE, # HELP
	b      []byte
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
