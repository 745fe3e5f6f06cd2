package summary

import (
	"math"
	"strconv"

	"github.com/pcptools/pcptools/stream"
)

// JSON output (pcpsummary --json): one object per line, for programs. Every
// statistic is there whatever the column options say (they choose what the
// text shows); -l adds a first object describing the archive and the
// window. Times are RFC 3339 in the reporting zone, to the microsecond
// (pmlogsummary's precision); a number that is not finite is null.
//
//	{"metric":"disk.dev.read","instance":"sda","inst":0,"units":"count / sec",
//	 "stochastic_average":0.094,"time_average":0.094,"sum":270,"min":0,
//	 "min_time":"2004-11-24T23:11:06.305961Z","max":1.467,"max_time":...,
//	 "count":47,"sparse":false}
//
// pcpsummary adds what pmlogsummary does not give: "values" (how many
// values, or rates for a counter, went into the spread), "stddev" (their
// population standard deviation) and, with --percentiles 50,90,99,
// "percentiles":{"50":...,"90":...,"99":...} from a DDSketch of relative
// accuracy 1% (spread.go).
//
// Every object also says where the instance was (presence.go):
// "samples" (results carrying a value of it), "first_seen", "last_seen",
// "gaps" (returns after results of its metric that lacked it), "resets"
// (a counter going down) and "marks" (<mark>s after its first value).
//
// A singular metric has "instance":null and no "inst"; an instance whose
// name is unknown has "instance":null and its number; a counter without a
// single interval has "insufficient":true and no statistics; with -B,
// "bins":[{"le":55.9,"count":41},...] ("le" is null for pmlogsummary's
// empty "[]" bins).
//
// An object whose statistics come from the aggregates of an archive
// reduced by pcpreduce (reduced.go) ends with "from_aggregates":true and
// "reduce_interval" (the reduction's interval, in seconds).

const jsonTime = "2006-01-02T15:04:05.000000Z07:00"

func appendJSONNum(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func (s *summarizer) appendJSONTime(b []byte, t stream.Timestamp) []byte {
	b = append(b, '"')
	b = t.Time().In(s.loc).AppendFormat(b, jsonTime)
	return append(b, '"')
}

func (s *summarizer) appendJSON(b []byte, st *Stat) []byte {
	b = append(b, '{')
	if s.o.HostColumn {
		b = append(b, `"host":`...)
		b = append(strconv.AppendQuote(b, s.o.Host), ',')
	}
	b = append(b, `"metric":`...)
	b = strconv.AppendQuote(b, st.Metric)
	b = append(b, `,"instance":`...)
	if st.Named {
		b = strconv.AppendQuote(b, st.InstName)
	} else {
		b = append(b, "null"...)
	}
	if st.Indom {
		b = append(b, `,"inst":`...)
		b = strconv.AppendInt(b, int64(st.Inst), 10)
	}
	b = append(b, `,"units":`...)
	b = strconv.AppendQuote(b, st.Units)
	b = s.appendJSONPresence(b, st)
	if st.Insufficient {
		return append(b, `,"insufficient":true}`+"\n"...)
	}
	b = append(b, `,"stochastic_average":`...)
	b = appendJSONNum(b, st.StochasticAverage)
	b = append(b, `,"time_average":`...)
	b = appendJSONNum(b, st.TimeAverage)
	b = append(b, `,"sum":`...)
	b = appendJSONNum(b, st.Sum)
	b = append(b, `,"min":`...)
	b = appendJSONNum(b, st.Min)
	b = append(b, `,"min_time":`...)
	b = s.appendJSONTime(b, st.MinTime)
	b = append(b, `,"max":`...)
	b = appendJSONNum(b, st.Max)
	b = append(b, `,"max_time":`...)
	b = s.appendJSONTime(b, st.MaxTime)
	b = append(b, `,"count":`...)
	b = strconv.AppendUint(b, uint64(st.Count), 10)
	b = append(b, `,"values":`...)
	b = strconv.AppendUint(b, st.Values, 10)
	b = append(b, `,"stddev":`...)
	b = appendJSONNum(b, st.StdDev)
	if st.Percentiles != nil {
		b = append(b, `,"percentiles":{`...)
		for i, p := range st.Percentiles {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendFloat(b, p.P, 'g', -1, 64)
			b = append(b, `":`...)
			b = appendJSONNum(b, p.Value)
		}
		b = append(b, '}')
	}
	b = append(b, `,"sparse":`...)
	b = strconv.AppendBool(b, st.Sparse)
	if st.FromAggregates {
		b = append(b, `,"from_aggregates":true,"reduce_interval":`...)
		b = appendJSONNum(b, st.ReduceInterval)
	}
	if st.Bins != nil {
		b = append(b, `,"bins":[`...)
		for i, bin := range st.Bins {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"le":`...)
			if bin.Empty {
				b = append(b, "null"...)
			} else {
				b = appendJSONNum(b, bin.Upper)
			}
			b = append(b, `,"count":`...)
			b = strconv.AppendUint(b, uint64(bin.Count), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// appendJSONPresence appends the instance's presence (presence.go).
func (s *summarizer) appendJSONPresence(b []byte, st *Stat) []byte {
	b = append(b, `,"samples":`...)
	b = strconv.AppendUint(b, st.Samples, 10)
	b = append(b, `,"first_seen":`...)
	b = s.appendJSONTime(b, st.FirstSeen)
	b = append(b, `,"last_seen":`...)
	b = s.appendJSONTime(b, st.LastSeen)
	b = append(b, `,"gaps":`...)
	b = strconv.AppendUint(b, uint64(st.Gaps), 10)
	b = append(b, `,"resets":`...)
	b = strconv.AppendUint(b, uint64(st.Resets), 10)
	b = append(b, `,"marks":`...)
	b = strconv.AppendUint(b, uint64(st.Marks), 10)
	return b
}

// appendJSONLabel appends the object -l adds: the archive and the window.
func (s *summarizer) appendJSONLabel(b []byte, lab stream.Label) []byte {
	b = append(b, '{')
	if s.o.HostColumn {
		b = append(b, `"host":`...)
		b = append(strconv.AppendQuote(b, s.o.Host), ',')
	}
	b = append(b, `"archive":{"version":`...)
	b = strconv.AppendInt(b, int64(lab.Version), 10)
	b = append(b, `,"host":`...)
	b = strconv.AppendQuote(b, lab.Hostname)
	b = append(b, `,"start":`...)
	b = s.appendJSONTime(b, s.start.stamp())
	b = append(b, `,"end":`...)
	if s.finish.sec == maxTime {
		b = append(b, "null"...)
	} else {
		b = s.appendJSONTime(b, s.finish.stamp())
	}
	return append(b, "}}\n"...)
}
