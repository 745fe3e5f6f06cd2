package summary

import (
	"strconv"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// CSV output (pcpsummary --csv): a header, then one row per
// metric-instance with the fields of the JSON objects (json.go), in this
// order, and one column "pN" per percentile asked for. An empty field is
// a number that is not finite, a statistic an instance without a single
// counter interval does not have, or the instance name or number of a
// singular metric. Times are RFC 3339 in the reporting zone; -l, -H and
// -B do not apply.
var csvColumns = []string{"metric", "instance", "inst", "units", "insufficient", "sparse",
	"samples", "first_seen", "last_seen", "gaps", "resets", "marks",
	"count", "values", "stochastic_average", "time_average", "sum",
	"min", "min_time", "max", "max_time", "stddev"}

// appendCSVHeaderFor appends the header of o's rows, with a first column
// "host" when host.
func appendCSVHeaderFor(b []byte, o *Options, host bool) []byte {
	if host {
		b = append(b, "host,"...)
	}
	b = append(b, strings.Join(csvColumns, ",")...)
	for _, p := range o.Percentiles {
		b = append(b, ",p"...)
		b = strconv.AppendFloat(b, p, 'g', -1, 64)
	}
	return append(b, '\n')
}

// appendCSVField appends a field, quoted as RFC 4180 says when it must be.
func appendCSVField(b []byte, f string) []byte {
	if !strings.ContainsAny(f, ",\"\r\n") && strings.TrimSpace(f) == f {
		return append(b, f...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(f, `"`, `""`)...)
	return append(b, '"')
}

func appendCSVNum(b []byte, v float64) []byte {
	b = append(b, ',')
	if v != v || v > maxFloat || v < -maxFloat {
		return b
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

const maxFloat = 1.7976931348623157e308

func (s *summarizer) appendCSVTime(b []byte, t stream.Timestamp) []byte {
	return t.Time().In(s.loc).AppendFormat(b, jsonTime)
}

func (s *summarizer) appendCSV(b []byte, st *Stat) []byte {
	if s.o.HostColumn {
		b = append(appendCSVField(b, s.o.Host), ',')
	}
	b = appendCSVField(b, st.Metric)
	b = append(b, ',')
	if st.Named {
		b = appendCSVField(b, st.InstName)
	}
	b = append(b, ',')
	if st.Indom {
		b = strconv.AppendInt(b, int64(st.Inst), 10)
	}
	b = append(b, ',')
	b = appendCSVField(b, st.Units)
	b = append(b, ',')
	b = strconv.AppendBool(b, st.Insufficient)
	b = append(b, ',')
	b = strconv.AppendBool(b, st.Sparse)
	b = append(b, ',')
	b = strconv.AppendUint(b, st.Samples, 10)
	b = append(b, ',')
	b = s.appendCSVTime(b, st.FirstSeen)
	b = append(b, ',')
	b = s.appendCSVTime(b, st.LastSeen)
	for _, n := range []uint32{st.Gaps, st.Resets, st.Marks} {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(n), 10)
	}
	if st.Insufficient {
		for range len(csvColumns) - 12 + len(s.o.Percentiles) {
			b = append(b, ',')
		}
		return append(b, '\n')
	}
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(st.Count), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, st.Values, 10)
	b = appendCSVNum(b, st.StochasticAverage)
	b = appendCSVNum(b, st.TimeAverage)
	b = appendCSVNum(b, st.Sum)
	b = appendCSVNum(b, st.Min)
	b = append(b, ',')
	b = s.appendCSVTime(b, st.MinTime)
	b = appendCSVNum(b, st.Max)
	b = append(b, ',')
	b = s.appendCSVTime(b, st.MaxTime)
	b = appendCSVNum(b, st.StdDev)
	for _, p := range st.Percentiles {
		b = appendCSVNum(b, p.Value)
	}
	return append(b, '\n')
}
