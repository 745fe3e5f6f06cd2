package stream

import (
	"fmt"
	"slices"
	"time"
)

// Concat joins the streams of several archives of one host, one after the
// other, as libpcp does for a multi-archive context: each archive must
// start after the previous one ends, a <mark> is placed 1 ms after the end
// of each archive that another follows (a gap in the data), and metadata an
// earlier archive already gave (the same descriptor, text, label set, or an
// instance domain that has not changed) is not repeated. Every archive's
// Label record is kept, so consumers see where each begins.
//
// A descriptor that changes between archives (type, semantics, units or
// instance domain of one PMID) is an error: merging such archives needs
// pcpextract's -x.
func Concat(names []string, its ...Iterator) Iterator {
	return &concat{names: names, its: its, descs: map[PMID]*Desc{}, texts: map[[2]uint32]string{},
		labels: map[[2]uint32]*LabelSet{}, indoms: NewInDomTracker()}
}

// ConcatSeq is Concat over iterators that next hands out one at a time,
// for a source that does not know in advance how many it holds (streams
// that follow one another on a pipe). next returns nil when there are no
// more; an error from it ends the iteration.
func ConcatSeq(next func() (Iterator, string, error)) Iterator {
	c := Concat(nil).(*concat)
	c.more = next
	return c
}

type concat struct {
	more    func() (Iterator, string, error) // ConcatSeq's source
	names   []string
	its     []Iterator
	i       int
	cur     Record
	mark    Mark
	pending bool   // a mark is to be emitted before the next archive
	held    Record // the record that came after the mark
	last    Timestamp
	prevEnd Timestamp // end of the previous archive
	data    bool      // the current archive has had data
	host    string
	descs   map[PMID]*Desc
	texts   map[[2]uint32]string
	labels  map[[2]uint32]*LabelSet
	indoms  *InDomTracker
	err     error
	deferOK bool // DeferChecks was asked: inputs fetched later defer too
}

func (c *concat) name(i int) string {
	if i < len(c.names) {
		return c.names[i]
	}
	return fmt.Sprintf("input %d", i+1)
}

func (c *concat) Next() bool {
	if c.err != nil {
		return false // (CheckResult failed)
	}
	if c.held != nil {
		c.cur, c.held = c.held, nil
		return true
	}
	if c.more != nil && len(c.its) == 0 && !c.fetch() {
		return false
	}
	for c.err == nil && c.i < len(c.its) {
		it := c.its[c.i]
		if !it.Next() {
			if err := it.Err(); err != nil {
				c.err = err
				return false
			}
			c.i++
			if c.more != nil && c.i == len(c.its) && !c.fetch() && c.err != nil {
				return false
			}
			if c.data && c.i < len(c.its) {
				c.prevEnd = c.last
				c.mark.T = c.last.Add(time.Millisecond)
				c.pending = true
			}
			c.data = false
			continue
		}
		rec := it.At()
		if c.keep(rec) {
			if c.pending {
				// Emit the mark first; the record is re-examined next time.
				c.pending = false
				c.cur = &c.mark
				c.last = c.mark.T
				c.held = rec
				return true
			}
			c.cur = rec
			if t := rec.Time(); t.After(c.last) {
				c.last = t
			}
			return true
		}
	}
	return false
}

// fetch asks ConcatSeq's source for the next iterator: false when it has
// none (c.err set if it failed).
func (c *concat) fetch() bool {
	it, name, err := c.more()
	if err != nil {
		c.err = err
		return false
	}
	if it == nil {
		c.more = nil
		return false
	}
	c.its = append(c.its, it)
	c.names = append(c.names, name)
	if c.deferOK {
		deferChecks(it)
	}
	return true
}

// DeferChecks implements CheckDeferrer: every input that can defers the
// checks of its results, from its next record on, and checks them when
// CheckResult asks; an input that cannot checks its own as before.
// Concat does not Unwrap (it makes marks and drops metadata), so it
// passes the capability on itself.
func (c *concat) DeferChecks() bool {
	c.deferOK = true
	for _, it := range c.its[c.i:] {
		deferChecks(it)
	}
	return true
}

func deferChecks(it Iterator) {
	if d, ok := As[CheckDeferrer](it); ok {
		d.DeferChecks()
	}
}

// CheckResult implements CheckDeferrer: the current input checks its
// current record, which is the concatenation's unless that is a mark made
// here; an error ends the concatenation too.
func (c *concat) CheckResult() error {
	if c.err != nil || c.cur == nil || c.cur == Record(&c.mark) || c.i >= len(c.its) {
		return c.err
	}
	if d, ok := As[CheckDeferrer](c.its[c.i]); ok {
		if err := d.CheckResult(); err != nil {
			c.err = err
			return err
		}
	}
	return nil
}

// keep drops metadata that repeats what an input before the current one
// gave; a repeat within the first input is that input's own (a label set
// restated later) and is kept, as a copy of the input alone keeps it.
func (c *concat) keep(rec Record) bool {
	switch r := rec.(type) {
	case *Label:
		if c.host == "" {
			c.host = r.Hostname
		} else if r.Hostname != c.host {
			c.err = fmt.Errorf("%s: host %q differs from %q of the archives before it; use pcpextract to merge hosts into a folio", c.here(), r.Hostname, c.host)
			return false
		}
		return true
	case *Desc:
		if d, ok := c.descs[r.PMID]; ok {
			if d.Type != r.Type || d.Sem != r.Sem || d.Units != r.Units || d.InDom != r.InDom {
				c.err = fmt.Errorf("%s: metric %s (%s) changes its descriptor from the archives before it", c.here(), r.PMID, firstName(r.Names))
				return false
			}
			if slices.Equal(d.Names, r.Names) && c.i > 0 {
				return false
			}
		}
		c.descs[r.PMID] = CloneRecord(r).(*Desc)
	case *Text:
		k := [2]uint32{r.Type, r.Ident}
		if t, ok := c.texts[k]; ok && t == r.Text && c.i > 0 {
			return false
		}
		c.texts[k] = r.Text
	case *LabelSet:
		k := [2]uint32{r.Type, r.Ident}
		if l, ok := c.labels[k]; ok && sameSets(l.Sets, r.Sets) && c.i > 0 {
			return false
		}
		c.labels[k] = CloneRecord(r).(*LabelSet)
	case *InDom:
		prev := c.indoms.Current(r.InDom)
		next, err := c.indoms.Apply(r)
		if err != nil {
			c.err = fmt.Errorf("%s: %w", c.here(), err)
			return false
		}
		if prev != nil && slices.Equal(prev.Insts, next.Insts) && slices.Equal(prev.Names, next.Names) && c.i > 0 && !c.data {
			return false
		}
	case *Result, *Mark:
		if t := rec.Time(); c.i > 0 && !t.After(c.prevEnd) && !c.data {
			c.err = fmt.Errorf("%s: starts at %s, before the archive before it ends (%s): archives overlap; merge them with pcpextract", c.here(), t, c.prevEnd)
			return false
		}
		c.data = true
	}
	return true
}

func firstName(n []string) string {
	if len(n) == 0 {
		return "no name"
	}
	return n[0]
}

func sameSets(a, b []OneLabelSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Inst != b[i].Inst || a[i].JSON != b[i].JSON || a[i].NLabels != b[i].NLabels || !slices.Equal(a[i].Labels, b[i].Labels) {
			return false
		}
	}
	return true
}

// here names where the record being kept was read: its file and offset
// when the input can say, else the input's name.
func (c *concat) here() string {
	if w := Where(c.its[c.i]); w != "" {
		return w
	}
	return c.name(c.i)
}

// Where implements Locator: where the current input read its current
// record.
func (c *concat) Where() (string, int64, bool) {
	if c.cur == nil || c.cur == Record(&c.mark) || c.i >= len(c.its) {
		return "", 0, false // the marks between inputs are made here
	}
	if l, ok := As[Locator](c.its[c.i]); ok {
		return l.Where()
	}
	return "", 0, false
}

func (c *concat) At() Record { return c.cur }

// Source returns the iterator of the archive being read (nil before the
// first or after the last): the one whose records At gives, apart from
// the marks the join places.
func (c *concat) Source() Iterator {
	if c.i < len(c.its) {
		return c.its[c.i]
	}
	return nil
}
func (c *concat) Err() error { return c.err }
