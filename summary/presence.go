package summary

// presence is pcpsummary's honest account of one instance (pcp#417:
// pmlogsummary's count is of intervals for counters, and its times are
// shifted at marks and resets, which mislead when instances come and go).
// It is kept in the first pass only.
//
//   - samples: the results in the window that carry a value of the instance
//   - firstSeen, lastSeen: the first and last of those results' times
//   - gaps: how many times the instance came back after one or more of
//     its metric's results (with values) that lacked it
//   - resets: how many times a counter went down between two values
//     with no <mark> between them (with PCP_COUNTER_WRAP too: a wrap is
//     still a reset here)
//   - marks: the <mark>s (and empty results) after the instance's first
//     value
type presence struct {
	samples             uint64
	firstSeen, lastSeen timeval
	seq                 uint64 // the metric's result number at lastSeen
	gaps, resets, marks uint32
}

// see notes a value of the instance in the metric's result number seq.
func (p *presence) see(ts timeval, seq uint64) {
	if p.samples == 0 {
		p.firstSeen = ts
	} else if seq > p.seq+1 {
		p.gaps++
	}
	p.samples++
	p.lastSeen, p.seq = ts, seq
}

// fill copies the presence into a Stat.
func (p *presence) fill(st *Stat) {
	st.Samples, st.Gaps, st.Resets, st.Marks = p.samples, p.gaps, p.resets, p.marks
	st.FirstSeen, st.LastSeen = p.firstSeen.stamp(), p.lastSeen.stamp()
}
