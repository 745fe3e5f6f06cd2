package mmv

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Domain is pmdammv's PMDA domain number.
const Domain = 70

// Prefix is the first part of every name pmdammv exports.
const Prefix = "mmv"

// Sampler samples one MMV file, or every MMV file in a directory, and
// turns what it reads into records as pmdammv presents the files through
// pmcd: names mmv.<file>.<metric> (mmv.<metric> with FlagNoPrefix), PMIDs
// 70.<cluster>.<item>, instance domains 70.<cluster<<11|serial>, elapsed
// timers as 64-bit microsecond counters, one-line and help text.
type Sampler struct {
	Path  string           // an MMV file, or a directory of them
	Warn  func(error)      // damaged or vanished files; nil: ignored
	Tries int              // reads of a file in flux before it is skipped (0: 5)
	Wait  time.Duration    // between those reads (0: 10ms)
	Now   func() time.Time // for elapsed timers in progress (nil: time.Now)

	gens  map[string]uint64 // last generation seen per file
	descs map[stream.PMID]*stream.Desc
	// redesc: metrics left out because they came back with other
	// metadata than their PMID was recorded with (warned about once)
	redesc map[stream.PMID]bool
	indoms map[stream.InDomID]string // signature of the last InDom written
	labels map[[2]uint32]string      // (type, ident): text of the label set last written
	cur    []loaded                  // the files of the sample in progress
	rb     stream.ResultBuilder
	// the files' last snapshots, by path (see read)
	snaps   map[string]*snapshot
	res     stream.Result // kept between samples
	plan    *plan         // the last result, to patch (see plan.go)
	trace   []planTrace   // where the values of the result being built came from
	planned int           // samples taken through a plan (for tests)
	// pathErr is the last error reading Path (said once, until it
	// changes or the path reads again); hinted: the advice about a
	// directory holding no MMV files was given.
	pathErr string
	hinted  bool
}

func (s *Sampler) warn(err error) {
	if s.Warn != nil {
		s.Warn(err)
	}
}

// loaded is one file read in a sample.
type loaded struct {
	path    string
	client  string
	f       *File
	cluster uint32
	snap    *snapshot
}

// snapshot is what a file gave at its last sample: its bytes, what they
// decoded to, and the storage for the next read. While a file is only
// refreshed (File.Refresh: its values moved, nothing else), sampleFile
// reuses what it made of the file's metadata the first time (meta).
type snapshot struct {
	data, spare []byte
	f           *File
	fresh       bool // f was refreshed, not decoded, in this sample
	meta        *fileMeta
	order       *valueOrder
}

// fileMeta is sampleFile's reading of a file's metadata: the metrics it
// takes (ok) and their names, for a cluster.
type fileMeta struct {
	cluster uint32
	ok      []bool
	names   []string // "" where !ok
}

// noRefresh has every sample decode its files (for tests comparing).
var noRefresh = false

// read is Read keeping the file's bytes between samples: a file that was
// only refreshed is not decoded again.
func (s *Sampler) read(p string, tries int, wait time.Duration) (*File, *snapshot, error) {
	sn := s.snaps[p]
	if sn == nil {
		sn = &snapshot{}
		s.snaps[p] = sn
	}
	for i := 0; ; i++ {
		data, err := readInto(p, sn.spare)
		if err != nil {
			return nil, nil, err
		}
		if sn.f != nil && !noRefresh && sn.f.Refresh(sn.data, data) {
			sn.data, sn.spare, sn.fresh = data, sn.data, true
			return sn.f, sn, nil
		}
		sn.f, sn.meta, sn.order, sn.fresh = nil, nil, nil, false
		f, err := Decode(p, data)
		if err == nil {
			sn.data, sn.spare, sn.f = data, sn.data, f
			return f, sn, nil
		}
		sn.spare = data[:0]
		if !isInFlux(err) || i+1 >= tries {
			return f, nil, err
		}
		time.Sleep(wait)
	}
}

func (s *Sampler) files() []string {
	st, err := os.Stat(s.Path)
	if err == nil && !st.IsDir() {
		s.pathErr = ""
		return []string{s.Path}
	}
	var ents []os.DirEntry
	if err == nil {
		ents, err = os.ReadDir(s.Path)
	}
	if err != nil {
		// once, not at every sample: a file that went away may come
		// back (an application restarted)
		if msg := err.Error(); msg != s.pathErr {
			s.pathErr = msg
			s.warn(fmt.Errorf("%w (said once; recording goes on)", err))
		}
		return nil
	}
	s.pathErr = ""
	var out []string
	sub := false
	for _, e := range ents { // ReadDir sorts by name, as pmdammv's alphasort
		sub = sub || e.Name() == "mmv" && e.IsDir()
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		out = append(out, filepath.Join(s.Path, e.Name()))
	}
	if len(out) == 0 && sub && !s.hinted {
		// $PCP_TMP_DIR named for $PCP_TMP_DIR/mmv
		s.hinted = true
		s.warn(fmt.Errorf("%s holds no MMV files, and a directory mmv: applications write theirs in $PCP_TMP_DIR/mmv; name %s to record them", s.Path, filepath.Join(s.Path, "mmv")))
	}
	return out
}

// load reads the files named by paths (Sampler.files) for a sample.
func (s *Sampler) load(paths []string) []loaded {
	tries, wait := s.Tries, s.Wait
	if tries <= 0 {
		tries = 5
	}
	if wait <= 0 {
		wait = 10 * time.Millisecond
	}
	var out []loaded
	used := map[uint32]bool{}
	if s.snaps == nil {
		s.snaps = map[string]*snapshot{}
	}
	for p := range s.snaps {
		if !slices.Contains(paths, p) {
			delete(s.snaps, p) // gone: its bytes go too
		}
	}
	for _, p := range paths {
		f, sn, err := s.read(p, tries, wait)
		if err != nil {
			s.warn(err)
			continue
		}
		if !f.ProcessAlive() {
			continue // pmdammv drops the files of processes that died
		}
		out = append(out, loaded{path: p, client: filepath.Base(p), f: f, cluster: f.Cluster, snap: sn})
	}
	// pmdammv honours a requested cluster and gives each file asking
	// for none (0) the lowest cluster not yet used, in name order.
	for i := range out {
		if out[i].cluster == 0 {
			c := uint32(1)
			for used[c] {
				c++
			}
			out[i].cluster = c
		}
		used[out[i].cluster] = true
	}
	return out
}

// Sample reads the files once and emits the records for time t: the
// descriptions, texts and instance domains not yet emitted, a mark when a
// file restarted with a new generation, then one result. The result's
// body is reused by the next Sample: emit must not keep it.
func (s *Sampler) Sample(t time.Time, emit func(stream.Record) error) error {
	if s.descs == nil {
		s.gens, s.descs, s.indoms = map[string]uint64{}, map[stream.PMID]*stream.Desc{}, map[stream.InDomID]string{}
		s.labels = map[[2]uint32]string{}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	ts := stream.FromTime(t)
	paths := s.files()
	if ok, err := s.samplePlanned(paths, ts, now, emit); ok || err != nil {
		return err
	}
	files := s.load(paths)
	s.cur = files
	defer func() { s.cur = nil }()
	seen := map[string]uint64{}
	restarted := false
	for _, l := range files {
		seen[l.client] = l.f.Generation
		if g, ok := s.gens[l.client]; ok && g != l.f.Generation {
			restarted = true
		}
	}
	s.gens = seen
	if restarted {
		if err := emit(&stream.Mark{T: ts}); err != nil {
			return err
		}
	}
	s.rb.Reset()
	s.trace = s.trace[:0]
	if _, ok := s.labels[[2]uint32{stream.LabelDomain, Domain}]; !ok {
		s.labels[[2]uint32{stream.LabelDomain, Domain}] = ""
		if err := emit(&stream.LabelSet{T: ts, Type: stream.LabelDomain, Ident: Domain,
			Sets: []stream.OneLabelSet{DomainLabels()}}); err != nil {
			return err
		}
	}
	if err := s.control(ts, len(files), emit); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, l := range files {
		if err := s.sampleFile(i, l, ts, now(), names, emit); err != nil {
			return err
		}
	}
	// the result's buffer is reused by the next sample: emit must write
	// or copy it before it returns, as format's Writer does
	if err := s.rb.Build(ts, &s.res); err != nil {
		return err
	}
	s.makePlan(files, paths)
	return emit(&s.res)
}

// desc is the description pmdammv gives metric m of a file in cluster.
func desc(m *Metric, cluster uint32, name string) *stream.Desc {
	d := &stream.Desc{PMID: stream.NewPMID(Domain, cluster, m.Item), Type: stream.Type(m.Type),
		Sem: stream.Sem(m.Semantics), Units: m.Units, InDom: stream.InDomNull, Names: []string{name}}
	if m.Type == TypeElapsed {
		d.Type, d.Sem, d.Units = stream.Type64, stream.SemCounter, stream.NewUnits(0, 1, 0, 0, 1, 0)
	} else if d.Sem == 0 {
		d.Sem = stream.SemCounter
	}
	if m.Indom != 0 {
		d.InDom = stream.NewInDomID(Domain, cluster<<11|m.Indom)
	}
	return d
}

func (s *Sampler) sampleFile(fi int, l loaded, ts stream.Timestamp, now time.Time, names map[string]bool, emit func(stream.Record) error) error {
	f := l.f
	prefix := Prefix + "." + l.client + "."
	if f.Flags&FlagNoPrefix != 0 {
		prefix = Prefix + "."
	}
	var ok []bool
	if m := l.snap.reusable(l.cluster); m != nil && claim(names, m.names) {
		ok = m.ok // the metadata as the last sample found it: nothing to write
	} else {
		var err error
		if ok, err = s.sampleMeta(l, ts, prefix, names, emit); err != nil {
			return err
		}
	}
	s.sampleValues(fi, l, ok, now)
	return nil
}

// reusable is the metadata sampleFile found in the file at an earlier
// sample, when the file has only been refreshed since and has the same
// cluster; nil otherwise.
func (sn *snapshot) reusable(cluster uint32) *fileMeta {
	if sn == nil || !sn.fresh || sn.meta == nil || sn.meta.cluster != cluster {
		return nil
	}
	return sn.meta
}

// claim adds a file's metric names to those of the sample, unless one of
// them is there already (another file's: sampleMeta says which).
func claim(names map[string]bool, mine []string) bool {
	for _, n := range mine {
		if n != "" && names[n] {
			return false
		}
	}
	for _, n := range mine {
		if n != "" {
			names[n] = true
		}
	}
	return true
}

// sampleMeta writes what is new in the metadata of a file (descriptions,
// help texts, labels, instance domains) and reports which of its metrics
// the sample takes. When nothing was refused, the snapshot keeps that for
// the next samples.
func (s *Sampler) sampleMeta(l loaded, ts stream.Timestamp, prefix string, names map[string]bool, emit func(stream.Record) error) ([]bool, error) {
	f := l.f
	ok := make([]bool, len(f.Metrics))
	mine := make([]string, len(f.Metrics))
	clean := true
	items := map[uint32]bool{}
	for i := range f.Metrics {
		m := &f.Metrics[i]
		name := prefix + m.Name
		if names[name] || items[m.Item] || m.Item > 0x3ff {
			s.warn(fmt.Errorf("%s: metric %s (item %d): duplicate name or item, or item out of range: ignored", l.client, m.Name, m.Item))
			clean = false
			continue
		}
		names[name], items[m.Item] = true, true
		d := desc(m, l.cluster, name)
		old, known := s.descs[d.PMID]
		if known {
			if stream.DescChange(old, d) != "" || old.Names[0] != name {
				if !s.redesc[d.PMID] {
					s.warn(fmt.Errorf("%s: metric %s: PMID %s was recorded with other metadata: ignored", l.client, name, d.PMID))
					if s.redesc == nil {
						s.redesc = map[stream.PMID]bool{}
					}
					s.redesc[d.PMID] = true
				}
				clean = false
				continue
			}
			delete(s.redesc, d.PMID) // (as it was recorded again: warn if it changes again)
		} else {
			d.T = ts
			s.descs[d.PMID] = d
			if err := emit(d); err != nil {
				return nil, err
			}
			if err := s.metricLabels(d, emit); err != nil {
				return nil, err
			}
			for _, tx := range []struct {
				typ  uint32
				text string
				has  bool
			}{{stream.TextOneline, m.Short, m.HasShort}, {stream.TextHelp, m.Help, m.HasHelp}} {
				if tx.has {
					if err := emit(&stream.Text{T: ts, Type: tx.typ | stream.TextPMID, Ident: uint32(d.PMID), Text: tx.text}); err != nil {
						return nil, err
					}
				}
			}
		}
		ok[i], mine[i] = true, name
	}
	for _, in := range f.Indoms {
		id := stream.NewInDomID(Domain, l.cluster<<11|in.Serial)
		insts, names := make([]int32, len(in.Instances)), make([]string, len(in.Instances))
		var sig strings.Builder
		for k, x := range in.Instances {
			insts[k], names[k] = x.Internal, x.External
			fmt.Fprintf(&sig, "%d\x00%s\x00", x.Internal, x.External)
		}
		if s.indoms[id] == sig.String() {
			continue
		}
		s.indoms[id] = sig.String()
		if err := emit(&stream.InDom{T: ts, InDom: id, Encoding: stream.InDomFull, Insts: insts, Names: names}); err != nil {
			return nil, err
		}
		if err := s.instanceLabels(ts, id, insts, emit); err != nil {
			return nil, err
		}
	}
	if clean && l.snap != nil {
		l.snap.meta = &fileMeta{cluster: l.cluster, ok: ok, names: mine}
	}
	return ok, nil
}

// sampleValues adds the values of the metrics of a file the sample takes
// to the result, grouped by metric in metric order, each group in the
// file's order.
func (s *Sampler) sampleValues(fi int, l loaded, ok []bool, now time.Time) {
	f := l.f
	var ord *valueOrder
	if l.snap != nil && l.snap.fresh && l.snap.order != nil {
		ord = l.snap.order // the values' metrics and instances have not moved
	} else {
		ord = orderValues(f)
		if l.snap != nil {
			l.snap.order = ord
		}
	}
	for mi := range f.Metrics {
		group := ord.idx[ord.starts[mi]:ord.starts[mi+1]]
		if !ok[mi] || len(group) == 0 {
			continue
		}
		m := &f.Metrics[mi]
		d := s.descs[stream.NewPMID(Domain, l.cluster, m.Item)]
		open := false
		if bitsType(d.Type) {
			for _, k := range group {
				bits, has := valueBits(f, m, &f.Values[k], now)
				if !has {
					continue
				}
				if !open {
					s.rb.OpenBits(d.PMID, d.Type)
					open = true
				}
				s.rb.PutBits(ord.inst[k], bits)
				s.trace = append(s.trace, planTrace{int32(fi), k})
			}
			continue
		}
		for _, k := range group {
			val, has := value(f, m, f.Values[k], now)
			if !has {
				continue
			}
			if !open {
				s.rb.Open(d.PMID, d.Type)
				open = true
			}
			val.Inst = ord.inst[k]
			s.rb.Put(val)
			s.trace = append(s.trace, planTrace{int32(fi), k})
		}
	}
}

// valueOrder is a file's values grouped by metric: idx[starts[m]:
// starts[m+1]] are the indexes in File.Values of metric m's values, in
// the file's order; inst is each value's instance (InstNull without an
// instance domain). It holds while the file is only refreshed.
type valueOrder struct {
	starts []int
	idx    []int32
	inst   []int32
}

func orderValues(f *File) *valueOrder {
	o := &valueOrder{starts: make([]int, len(f.Metrics)+1), idx: make([]int32, len(f.Values)), inst: make([]int32, len(f.Values))}
	for _, v := range f.Values {
		o.starts[v.Metric+1]++
	}
	for i := 1; i < len(o.starts); i++ {
		o.starts[i] += o.starts[i-1]
	}
	fill := slices.Clone(o.starts[:len(f.Metrics)])
	for k, v := range f.Values {
		o.idx[fill[v.Metric]] = int32(k)
		fill[v.Metric]++
		o.inst[k] = stream.InstNull
		if v.Instance >= 0 {
			o.inst[k] = indomOf(f, f.Metrics[v.Metric].Indom).Instances[v.Instance].Internal
		}
	}
	return o
}

// bitsType reports a type whose values the result builder takes as 64 bits.
func bitsType(t stream.Type) bool {
	return t == stream.Type64 || t == stream.TypeU64 || t == stream.TypeDouble
}

// valueBits is value for a metric whose description has a 64-bit type
// (I64, U64, DOUBLE, and ELAPSED, recorded as 64-bit integers): the value's
// 64 bits, without a stream.Val.
func valueBits(f *File, m *Metric, v *Value, now time.Time) (uint64, bool) {
	sentinel := f.Flags&FlagSentinel != 0 && v.Bits == math.MaxUint64
	switch m.Type {
	case TypeI64, TypeU64:
		return v.Bits, !sentinel
	case TypeDouble:
		return v.Bits, true
	case TypeElapsed:
		return uint64(elapsed(int64(v.Bits), v.Extra, now)), !sentinel
	}
	val, has := value(f, m, *v, now)
	return val.U, has
}

func indomOf(f *File, serial uint32) *Indom {
	if f.lastIndom < len(f.Indoms) && f.Indoms[f.lastIndom].Serial == serial {
		return &f.Indoms[f.lastIndom]
	}
	for i := range f.Indoms {
		f.lastIndom = i
		if f.Indoms[i].Serial == serial {
			return &f.Indoms[i]
		}
	}
	return &Indom{}
}

// value is what pmdammv fetches for one value slot; present is false for
// FlagSentinel's "no value": integers with every bit set, empty strings.
// (pmdammv compares floats with NaN, which never matches; so do we.)
func value(f *File, m *Metric, v Value, now time.Time) (stream.Val, bool) {
	sentinel := f.Flags&FlagSentinel != 0
	switch m.Type {
	case TypeI32, TypeI64:
		if m.Type == TypeI32 {
			return stream.Val{I: int64(int32(v.Bits))}, !sentinel || v.Bits != math.MaxUint64
		}
		return stream.Val{I: int64(v.Bits)}, !sentinel || v.Bits != math.MaxUint64
	case TypeU32:
		return stream.Val{U: uint64(uint32(v.Bits))}, !sentinel || v.Bits != math.MaxUint64
	case TypeU64:
		return stream.Val{U: v.Bits}, !sentinel || v.Bits != math.MaxUint64
	case TypeFloat:
		return stream.Val{F: float64(math.Float32frombits(uint32(v.Bits)))}, true
	case TypeDouble:
		return stream.Val{F: math.Float64frombits(v.Bits)}, true
	case TypeString:
		return stream.Val{S: v.String}, !sentinel || v.String != ""
	case TypeElapsed:
		if sentinel && v.Bits == math.MaxUint64 {
			return stream.Val{}, false
		}
		return stream.Val{I: elapsed(int64(v.Bits), v.Extra, now)}, true
	}
	return stream.Val{}, false
}

// controls are pmdammv's own metrics, cluster 0, with its help texts.
var controls = []struct{ name, oneline, help string }{
	{"reload", "Control maps reloading", "Writing anything other then 0 to this metric will result in\nre-reading directory and re-mapping files.\n"},
	{"debug", "Debug flag", "See pmdbg(1).  pmstore into this metric to change the debug value.\n"},
	{"files", "Memory mapped file count", "Count of currently mapped and exported statistics files.\n"},
}

// control emits mmv.control.{reload,debug,files} as pmdammv presents them:
// reload and debug are 0 (nothing here stores into them), files counts the
// files mapped.
func (s *Sampler) control(ts stream.Timestamp, nfiles int, emit func(stream.Record) error) error {
	for i, c := range controls {
		pmid := stream.NewPMID(Domain, 0, uint32(i))
		if _, ok := s.descs[pmid]; !ok {
			d := &stream.Desc{T: ts, PMID: pmid, Type: stream.Type32, Sem: stream.SemInstant,
				InDom: stream.InDomNull, Names: []string{Prefix + ".control." + c.name}}
			s.descs[pmid] = d
			if err := s.metricLabels(d, emit); err != nil {
				return err
			}
			recs := []stream.Record{d,
				&stream.Text{T: ts, Type: stream.TextOneline | stream.TextPMID, Ident: uint32(pmid), Text: c.oneline},
				&stream.Text{T: ts, Type: stream.TextHelp | stream.TextPMID, Ident: uint32(pmid), Text: c.help}}
			for _, r := range recs {
				if err := emit(r); err != nil {
					return err
				}
			}
		}
		v := int64(0)
		if c.name == "files" {
			v = int64(nfiles)
		}
		s.rb.Add(pmid, stream.Type32, stream.Val{I: v})
		s.trace = append(s.trace, planTrace{-1, 0})
	}
	return nil
}

// metricLabels emits the cluster, item and instance domain label sets of
// a metric just described that pmlogger would record with it: those not
// recorded yet and not empty.
func (s *Sampler) metricLabels(d *stream.Desc, emit func(stream.Record) error) error {
	cluster, item := d.PMID.Cluster(), d.PMID.Item()
	type want struct {
		typ, ident uint32
		match      func(l loaded, lb Label) bool
	}
	wants := []want{
		{stream.LabelCluster, uint32(stream.NewPMID(Domain, cluster, 0)),
			func(l loaded, lb Label) bool { return l.cluster == cluster && lb.Identity == cluster }},
		{stream.LabelItem, uint32(d.PMID),
			func(l loaded, lb Label) bool { return l.cluster == cluster && lb.Identity == item }},
	}
	if d.InDom != stream.InDomNull {
		serial := d.InDom.Serial()
		wants = append(wants, want{stream.LabelInDom, uint32(d.InDom),
			func(l loaded, lb Label) bool { return l.cluster<<11|lb.Identity == serial }})
	}
	for _, w := range wants {
		key := [2]uint32{w.typ, w.ident}
		if _, done := s.labels[key]; done {
			continue
		}
		set, ok := fileLabels(s.cur, w.match, w.typ)
		if !ok {
			continue // nothing served: pmlogger records nothing, and asks again
		}
		s.labels[key] = set.JSON
		if err := emit(&stream.LabelSet{T: d.T, Type: w.typ, Ident: w.ident, Sets: []stream.OneLabelSet{set}}); err != nil {
			return err
		}
	}
	return nil
}

// instanceLabels emits the instances label set of an instance domain
// just recorded, one set per instance (empty ones too), unless it is the
// one recorded last for the domain.
func (s *Sampler) instanceLabels(ts stream.Timestamp, id stream.InDomID, insts []int32, emit func(stream.Record) error) error {
	if len(insts) == 0 {
		return nil
	}
	sets := make([]stream.OneLabelSet, 0, len(insts))
	var sig strings.Builder
	seen := map[int32]bool{}
	for _, in := range insts {
		if seen[in] {
			continue // pmdammv keeps the first of instances with one number
		}
		seen[in] = true
		set := instanceLabels(s.cur, id.Serial(), in)
		fmt.Fprintf(&sig, "%d\x00%s\x00", in, set.JSON)
		sets = append(sets, set)
	}
	key := [2]uint32{stream.LabelInstances, uint32(id)}
	if old, ok := s.labels[key]; ok && old == sig.String() {
		return nil
	}
	s.labels[key] = sig.String()
	return emit(&stream.LabelSet{T: ts, Type: stream.LabelInstances, Ident: uint32(id), Sets: sets})
}
