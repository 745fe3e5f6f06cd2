package summary

import (
	"fmt"
	"strconv"
)

// The fleet roll-up (pcpsummary --folio --fleet): once every host is
// summarised, one line per metric and instance over the hosts that have
// it, from each host's time average (the value pmlogsummary prints by
// default), minimum and maximum:
//
//	kernel.all.load ["1 minute"] 3 hosts: mean 0.520 total 1.560 min 0.010 (alpha) max 2.300 (beta) none
//
// mean is the mean of the hosts' averages, total their sum (for a rate,
// the fleet's throughput), min the lowest value any host had and the
// host, max likewise. Instances are matched across hosts by name (a
// singular metric has none); lines come in the order the hosts' summaries
// first printed them. A host without enough samples for a statistic
// (pmlogsummary's "insufficient") does not count. With --json each line
// is an object {"fleet":true,"metric":...,"instance":...,"units":...,
// "hosts":N,"mean":...,"total":...,"min":...,"min_host":...,"max":...,
// "max_host":...}.

type rollKey struct {
	metric, inst, units string
	named               bool
}

type rollRow struct {
	key              rollKey
	hosts            int
	sum              float64
	min, max         float64
	minHost, maxHost string
}

type rollup struct {
	rows  []*rollRow
	index map[rollKey]*rollRow
}

// hostStat is the part of a host's Stat the roll-up keeps.
type hostStat struct {
	key           rollKey
	avg, min, max float64
}

func keep(st *Stat) (hostStat, bool) {
	if st.Insufficient {
		return hostStat{}, false
	}
	return hostStat{key: rollKey{st.Metric, st.InstName, st.Units, st.Named},
		avg: st.TimeAverage, min: st.Min, max: st.Max}, true
}

// add takes a host's statistics, in the order it printed them.
func (r *rollup) add(host string, sts []hostStat) {
	if r.index == nil {
		r.index = map[rollKey]*rollRow{}
	}
	for _, st := range sts {
		row := r.index[st.key]
		if row == nil {
			row = &rollRow{key: st.key, min: st.min, max: st.max, minHost: host, maxHost: host}
			r.index[st.key] = row
			r.rows = append(r.rows, row)
		}
		row.hosts++
		row.sum += st.avg
		if st.min < row.min {
			row.min, row.minHost = st.min, host
		}
		if st.max > row.max {
			row.max, row.maxHost = st.max, host
		}
	}
}

// print writes the roll-up, as text (with the -p precision) or JSON.
func (r *rollup) print(b []byte, o *Options, hosts int) []byte {
	if !o.JSON {
		b = fmt.Appendf(b, "fleet (%d host%s):\n", hosts, map[bool]string{true: "s"}[hosts != 1])
	}
	for _, row := range r.rows {
		mean := row.sum / float64(row.hosts)
		if o.JSON {
			b = append(b, `{"fleet":true,"metric":`...)
			b = strconv.AppendQuote(b, row.key.metric)
			b = append(b, `,"instance":`...)
			if row.key.named {
				b = strconv.AppendQuote(b, row.key.inst)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, `,"units":`...)
			b = strconv.AppendQuote(b, row.key.units)
			b = append(b, `,"hosts":`...)
			b = strconv.AppendInt(b, int64(row.hosts), 10)
			b = append(b, `,"mean":`...)
			b = appendJSONNum(b, mean)
			b = append(b, `,"total":`...)
			b = appendJSONNum(b, row.sum)
			b = append(b, `,"min":`...)
			b = appendJSONNum(b, row.min)
			b = append(b, `,"min_host":`...)
			b = strconv.AppendQuote(b, row.minHost)
			b = append(b, `,"max":`...)
			b = appendJSONNum(b, row.max)
			b = append(b, `,"max_host":`...)
			b = strconv.AppendQuote(b, row.maxHost)
			b = append(b, "}\n"...)
			continue
		}
		b = append(b, row.key.metric...)
		if row.key.named {
			b = append(b, ` ["`...)
			b = append(b, row.key.inst...)
			b = append(b, `"]`...)
		}
		if row.hosts == 1 {
			b = append(b, " 1 host: mean "...)
		} else {
			b = fmt.Appendf(b, " %d hosts: mean ", row.hosts)
		}
		b = appendC(b, mean, o.Precision)
		b = append(b, " total "...)
		b = appendC(b, row.sum, o.Precision)
		b = append(b, " min "...)
		b = appendC(b, row.min, o.Precision)
		b = append(b, " ("+row.minHost+") max "...)
		b = appendC(b, row.max, o.Precision)
		b = append(b, " ("+row.maxHost+") "...)
		b = append(b, row.key.units...)
		b = append(b, '\n')
	}
	return b
}
