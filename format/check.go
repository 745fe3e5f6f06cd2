package format

// Check makes the integrity checks of PCP 6.0.3's pmlogcheck(1), in four
// passes over an archive:
//
//	pass 0  every physical file: the label (magic, version, length), the
//	        framing of every record (header length == trailer length, no
//	        truncation), whole index entries, metadata record types that
//	        belong to the archive's version, files holding only a label;
//	        and what libpcp checks when it opens the archive: the labels
//	        agree (version, volume field, pid, host), the metadata records
//	        decode, a descriptor never changes.
//	pass 1  the temporal index: volumes exist, timestamps are sane and do
//	        not go backwards, offsets lie inside the files and never
//	        decrease within a volume.
//	pass 2  the metric descriptors: a name, a valid type and semantics,
//	        an instance domain of the metric's own PMDA, plausible units.
//	pass 3  the data: timestamps not before the label and not going
//	        backwards, records that libpcp can decode, one value format
//	        per metric, values that can be extracted for their type, and
//	        counter wraps (a counter that goes down), reported as
//	        pmlogcheck reports them.
//
// Unlike pmlogcheck, Check keeps going after damage (it reports what it can
// of every file) and reads each data volume once: pass 0 frames a volume's
// records and pass 3 inspects each record as it is framed, so the cost is
// linear in the size of the archive. (pmlogcheck's pass 3 was quadratic
// until PCP issue #2082.) Findings come back ordered by pass.
//
// Designs rejected:
//   - Checking through the archive reader (Open/Records): the reader must
//     refuse or repair damage that Check has to describe byte by byte, and
//     it resolves things (delta instance domains, descriptor timestamps)
//     that Check needs raw. Check shares the codec instead.
//   - Printing as we go: pass 3 timestamps are printed with the date only
//     when the archive spans more than a day, which is known at the end.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// Severity grades a Finding.
type Severity int

// Severities. An archive with any Warning or Error finding is one that
// pmlogcheck would complain about.
const (
	Info    Severity = iota // notes that do not make the archive suspect; progress and counts with Verbose
	Warning                 // suspicious but readable: counter wraps, odd units, no index
	Error                   // damage: PCP tools will refuse or misread part of the archive
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// Finding is one thing Check has to say about an archive.
type Finding struct {
	// File is the path of the file concerned (as found on disk, with any
	// compression suffix); for a missing file, the name it should have.
	File string
	// Offset is the byte offset in File (in the decompressed bytes) of the
	// record or entry concerned, or -1 when the finding is about the file
	// or the archive as a whole.
	Offset   int64
	Pass     int
	Severity Severity
	Msg      string

	// PCP is the finding word for word as PCP 6.0.3's pmlogcheck prints
	// it (one or more lines, no final newline), where Check knows
	// pmlogcheck's wording; "" where it does not. See PCPReport.
	PCP string
	// PCPDebug is what libpcp prints about the finding under -Dlogmeta,
	// before PCP, or "".
	PCPDebug string
	// PCPEffect is what the finding does to pmlogcheck's run.
	PCPEffect PCPEffect

	pcpRank int // pass 2: the position in pmlogcheck's walk of the descriptors
	// pcpNoOpen, for a finding pass 0 prints and goes on from, is what
	// pmlogcheck says when libpcp then refuses to open the archive.
	pcpNoOpen string
}

// CheckOptions tune Check.
type CheckOptions struct {
	// NoWrap suppresses counter wrap reports (pmlogcheck -w).
	NoWrap bool
	// MetaOnly skips pass 3 (pmlogcheck -m); data volumes are still
	// framed by pass 0.
	MetaOnly bool
	// Verbose adds Info findings: records per file, counts per pass.
	Verbose bool
	// Start and End bound the records pass 3 looks at (pmlogcheck -S, -T).
	Start, End *stream.Timestamp
	// Location is the time zone of the clock times in pass 3 messages;
	// nil means the local zone, as pmlogcheck (without -z) uses.
	Location *time.Location
	// EveryRecord reports a finding that Check otherwise reports once per
	// metric (a value format unlike the metric's earlier one) in every
	// record it is found in, as pmlogcheck prints it (for PCPReport).
	EveryRecord bool
}

// Flagged reports whether findings hold a Warning or an Error: whether
// pmlogcheck would have printed anything about the archive.
func Flagged(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity >= Warning {
			return true
		}
	}
	return false
}

// FormatFindings prints findings one per line, in pcpcat --check's words:
// "file: [offset N] message", or "file: message" when the finding has no
// offset. (PCPReport gives them in pmlogcheck's words and order.)
func FormatFindings(w io.Writer, findings []Finding) error {
	bw := bufio.NewWriter(w)
	for _, f := range findings {
		if f.Offset >= 0 {
			fmt.Fprintf(bw, "%s: [offset %d] %s\n", f.File, f.Offset, f.Msg)
		} else {
			fmt.Fprintf(bw, "%s: %s\n", f.File, f.Msg)
		}
	}
	return bw.Flush()
}

// Check checks the archive name (a base name, or the name of any of its
// files, compressed or not) and returns what it found. The error is non-nil
// only when no file of the archive can be found at all; damage, however
// bad, is reported as findings.
func Check(name string, opts CheckOptions) ([]Finding, error) {
	c := &checker{opts: opts, loc: opts.Location, name: name}
	if c.loc == nil {
		c.loc = time.Local
	}
	files, err := findArchiveFiles(name)
	if err != nil {
		return nil, err
	}
	c.files = files
	c.run()
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Pass < c.out[j].Pass })
	dirRank := pcpDirOrder(files)
	res := make([]Finding, len(c.out))
	for i, f := range c.out {
		if f.Pass == 0 {
			if r, ok := dirRank[f.File]; ok {
				f.pcpRank = r
			} else {
				f.pcpRank = len(dirRank)
			}
		}
		if f.lazy != nil {
			f.Msg = f.lazy()
		}
		if f.lazyPCP != nil {
			f.PCP = f.lazyPCP()
		}
		res[i] = f.Finding
	}
	return res, nil
}

// File roles within an archive.
const (
	roleData = iota
	roleMeta
	roleIndex
)

// archFile is one physical file of the archive.
type archFile struct {
	path string
	role int
	vol  int // data volume number; -1 for .meta, -2 for .index (the label's vol field)

	size     int64 // decompressed size, -1 if the file could not be opened
	label    *stream.Label
	records  int  // framed records, label included (index: label + entries)
	damaged  bool // pass 0 stopped before the end of the file
	badStart bool // the label's start time is out of range

	// Record boundaries, to check the index's offsets against: every
	// record start of the .meta file; for a volume, the offsets the index
	// names (sorted) and those of them found not to be record starts.
	starts     []int64
	want       []int64
	nextWant   int
	misaligned map[int64]bool
}

// boundary notes that a record starts (or the file ends) at off; offsets
// arrive in increasing order.
func (f *archFile) boundary(off int64) {
	if f.role == roleMeta {
		f.starts = append(f.starts, off)
		return
	}
	for f.nextWant < len(f.want) && f.want[f.nextWant] <= off {
		if w := f.want[f.nextWant]; w < off {
			if f.misaligned == nil {
				f.misaligned = map[int64]bool{}
			}
			f.misaligned[w] = true
		}
		f.nextWant++
	}
}

// findArchiveFiles locates the files of the archive name as pmlogcheck
// does: strip a compression suffix and a .meta, .index or .N suffix from a
// name that exists, then take every file in the directory named base.meta,
// base.index or base.<digits>, each possibly compressed. Where a file
// exists both plain and compressed, the one PCP would open wins (plain,
// then the suffixes in compress.Suffixes order).
func findArchiveFiles(name string) ([]*archFile, error) {
	dir, file := filepath.Split(name)
	base := file
	// A name that is a file (perhaps only with a compression suffix added)
	// names the archive it belongs to; pmlogcheck keeps any other name as
	// it is, so that a base name may end in digits (archive-20150415.041154).
	if p, err := compress.Lookup(name); err == nil {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			file = filepath.Base(p)
		}
	}
	if st, err := os.Stat(dir + file); err == nil && !st.IsDir() {
		b, _ := compress.SplitSuffix(file)
		if i := strings.LastIndexByte(b, '.'); i > 0 {
			if ext := b[i+1:]; ext == "meta" || ext == "index" || allDigits(ext) {
				b = b[:i]
			}
		}
		base = b
	}
	if base == "" {
		return nil, fmt.Errorf("%s: not a PCP archive name", name)
	}
	scan := dir
	if scan == "" {
		scan = "."
	}
	ents, err := os.ReadDir(scan)
	if err != nil {
		return nil, fmt.Errorf("cannot scan for archive %s: %w", name, err)
	}
	type cand struct {
		f    *archFile
		rank int
	}
	byKey := map[string]cand{}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		n, suf := compress.SplitSuffix(e.Name())
		if !strings.HasPrefix(n, base+".") {
			continue
		}
		ext := n[len(base)+1:]
		f := &archFile{path: dir + e.Name(), size: -1}
		switch {
		case ext == "meta":
			f.role, f.vol = roleMeta, -1
		case ext == "index":
			f.role, f.vol = roleIndex, -2
		case allDigits(ext):
			v, err := strconv.Atoi(ext)
			if err != nil || v > math.MaxInt32 {
				continue
			}
			f.role, f.vol = roleData, v
		default:
			continue
		}
		rank := 0
		if suf != "" {
			rank = 1 + indexOf(compress.Suffixes, suf)
		}
		key := ext
		if f.role == roleData {
			key = strconv.Itoa(f.vol) // "0" and "00" are one volume to libpcp
		}
		if old, ok := byKey[key]; !ok || rank < old.rank {
			byKey[key] = cand{f, rank}
		}
	}
	if len(byKey) == 0 {
		return nil, fmt.Errorf("%s: no PCP archive files match %q: %w", name, dir+base, fs.ErrNotExist)
	}
	var out []*archFile
	for _, c := range byKey {
		out = append(out, c.f)
	}
	// .meta first (its label is the archive's), then .index, then the
	// volumes in order.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.role != b.role {
			return a.role == roleMeta || (a.role == roleIndex && b.role == roleData)
		}
		return a.vol < b.vol
	})
	return out, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func indexOf(ss []string, s string) int {
	for i, v := range ss {
		if v == s {
			return i
		}
	}
	return len(ss)
}

type finding struct {
	Finding
	lazy    func() string // builds Msg once pass 3 knows how to print times
	lazyPCP func() string // builds PCP likewise
}

// checker holds the state of one Check.
type checker struct {
	name  string // the archive as named to Check, for pmlogcheck's words
	opts  CheckOptions
	loc   *time.Location
	files []*archFile
	out   []finding

	meta  *archFile
	index *archFile
	vols  []*archFile

	golden     *stream.Label // the label the others are compared with
	goldenFile *archFile

	// metadata, from the .meta file
	metaOK  bool // read to the end with no damage and nothing libpcp rejects
	descs   []*descAt
	byPMID  map[stream.PMID]*descAt
	pmns    pmnsModel
	instNam map[stream.InDomID]map[int32]string
	fullDom map[stream.InDomID]bool
	pendTxt int // 1 + index in out of a help text record libpcp skips: fatal unless it is the last record

	// temporal index
	entries []indexAt

	// pass 3
	p3       bool // pass 3 is running
	p3ended  bool // past opts.End
	lastT    stream.Timestamp
	lastSeen bool
	firstT   stream.Timestamp
	results  int
	marks    int
	epoch    int // bumped by every <mark>: counter history before it does not count
	metrics  map[stream.PMID]*metricState
	byPos    []posMetric // the metric of each value set position in the last record
	limits   map[limitKey]int
	limitOut map[limitKey]int // index in out of the first report
}

type descAt struct {
	d   *stream.Desc
	off int64
}

type indexAt struct {
	e       IndexEntry
	usec    int64 // v2: raw microseconds, for the range check
	off     int64
	version int
}

func (c *checker) add(f *archFile, off int64, pass int, sev Severity, format string, args ...any) {
	name := ""
	if f != nil {
		name = f.path
	}
	c.out = append(c.out, finding{Finding: Finding{File: name, Offset: off, Pass: pass, Severity: sev, Msg: fmt.Sprintf(format, args...), PCPEffect: pcpEffect(pass, sev)}})
}

// pcpEffect is what a finding does to pmlogcheck's run unless the check
// that found it says otherwise: damage pass 0 finds fails the run.
func pcpEffect(pass int, sev Severity) PCPEffect {
	if pass == 0 && sev == Error {
		return PCPFails
	}
	return PCPGoesOn
}

// pcp sets pmlogcheck's wording of the last finding added.
func (c *checker) pcp(effect PCPEffect, format string, args ...any) {
	f := &c.out[len(c.out)-1]
	f.PCP = fmt.Sprintf(format, args...)
	f.PCPEffect = effect
}

func (c *checker) addPath(path string, pass int, sev Severity, format string, args ...any) {
	c.out = append(c.out, finding{Finding: Finding{File: path, Offset: -1, Pass: pass, Severity: sev, Msg: fmt.Sprintf(format, args...), PCPEffect: pcpEffect(pass, sev)}})
}

// addLazy adds a finding whose message is built at the end, and returns
// its index.
func (c *checker) addLazy(f *archFile, off int64, pass int, sev Severity, msg func() string) int {
	c.out = append(c.out, finding{Finding: Finding{File: f.path, Offset: off, Pass: pass, Severity: sev, PCPEffect: pcpEffect(pass, sev)}, lazy: msg})
	return len(c.out) - 1
}

func (c *checker) info(f *archFile, pass int, format string, args ...any) {
	if c.opts.Verbose {
		c.add(f, -1, pass, Info, format, args...)
	}
}

// archiveBase is the archive's name without the file suffixes.
func (c *checker) archiveBase() string {
	f := c.files[0]
	n, _ := compress.SplitSuffix(f.path)
	return n[:strings.LastIndexByte(n, '.')]
}

func (c *checker) run() {
	for _, f := range c.files {
		switch f.role {
		case roleMeta:
			c.meta = f
		case roleIndex:
			c.index = f
		default:
			c.vols = append(c.vols, f)
		}
	}
	base := c.archiveBase()
	// pmlogcheck names missing files by dirname(3) of the archive's name
	// and its base name: "./x.meta" for "x"
	pcpBase := filepath.Dir(base) + string(filepath.Separator) + filepath.Base(base)
	if c.meta == nil {
		c.addPath(base+".meta", 0, Error, "missing metadata file")
		c.pcp(PCPFails, "%s.meta: missing metadata file", pcpBase)
	}
	if len(c.vols) == 0 {
		c.addPath(base+".0", 0, Error, "missing data volume: no %s.N file", filepath.Base(base))
		c.pcp(PCPFails, "%s.0 (or similar): missing log file ", pcpBase)
	}
	c.byPMID = map[stream.PMID]*descAt{}
	c.instNam = map[stream.InDomID]map[int32]string{}
	c.fullDom = map[stream.InDomID]bool{}
	c.metrics = map[stream.PMID]*metricState{}
	c.limits = map[limitKey]int{}
	c.limitOut = map[limitKey]int{}

	if c.meta != nil {
		c.metaOK = true
		c.frameFile(c.meta, c.metaRecord)
		if c.meta.damaged || c.meta.label == nil {
			c.metaOK = false
		}
		if c.meta.label != nil && !c.meta.damaged && len(c.descs) == 0 {
			c.add(c.meta, -1, 2, Error, "no metric descriptors: libpcp cannot open an archive without metrics")
			c.metaOK = false
		}
	}
	if c.index != nil {
		c.frameFile(c.index, nil)
	}
	c.p3 = !c.opts.MetaOnly && c.meta != nil && c.meta.label != nil
	if c.p3 && c.opts.Verbose {
		c.add(c.files[0], -1, 3, Info, "pass 3: checking data records")
	}
	wants := map[int][]int64{}
	for _, ia := range c.entries {
		wants[int(ia.e.Vol)] = append(wants[int(ia.e.Vol)], ia.e.DataOff)
	}
	for _, v := range c.vols {
		w := wants[v.vol]
		sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
		v.want = w
		c.frameFile(v, c.dataRecord)
	}
	c.checkLabels()
	c.pass1()
	c.pass2()
	if c.p3 {
		c.finishPass3()
	}
}

// open opens f for reading, reporting failure.
func (c *checker) open(f *archFile) compress.File {
	// A FIFO named like an archive file would block the open until some
	// writer came, and a device would never end: refuse them, as the
	// reader's openFile does.
	if st, err := os.Stat(f.path); err == nil && !st.Mode().IsRegular() {
		c.add(f, -1, 0, Error, "cannot open: not a regular file (%s)", st.Mode().Type())
		f.damaged = true
		return nil
	}
	cf, err := compress.Open(f.path)
	if err != nil {
		c.add(f, -1, 0, Error, "cannot open or decompress: %v", err)
		f.damaged = true
		return nil
	}
	f.size = cf.Size()
	return cf
}

// frameFile is pass 0 for one file: it reads the label and frames every
// record (or index entry), handing each good data or metadata record to fn
// along with its offset. rec holds the whole record, both length words
// included, and is only valid during the call.
func (c *checker) frameFile(f *archFile, fn func(f *archFile, rec []byte, off int64)) {
	cf := c.open(f)
	if cf == nil {
		return
	}
	defer cf.Close()
	br := bufio.NewReaderSize(cf, 1<<20)
	size := f.size
	var off int64
	buf := make([]byte, 0, 4096)
	what := func(n int) string {
		if n == 0 {
			return "label record"
		}
		return "record " + strconv.Itoa(n)
	}
	// damage reports the damage that stops pass 0 in f at record n, in
	// our words (format, args) and pmlogcheck's (its words for record n
	// are pcp, or label when n is the label).
	damage := func(off int64, n int, pcp, label string, format string, args ...any) {
		f.damaged = true
		msg := what(n) + ": " + fmt.Sprintf(format, args...)
		if off > 0 {
			msg += fmt.Sprintf("; the last valid record ends at offset %d", off)
		}
		c.add(f, off, 0, Error, "%s", msg)
		if n == 0 && label != "" {
			pcp = f.path + ": " + label
		} else {
			pcp = fmt.Sprintf("%s[record %d]: %s", f.path, n, pcp)
		}
		if off > 0 {
			pcp += fmt.Sprintf("\n%s: last valid record ends at offset %d", f.path, off)
		}
		c.pcp(PCPFails, "%s", pcp)
	}
	readErr := func(off int64, err error) {
		f.damaged = true
		c.add(f, off, 0, Error, "read error: %v", err)
	}
	n := 0
	for {
		if f.role == roleIndex && n == 1 {
			c.indexEntries(f, br, off, size)
			break
		}
		if n > 0 {
			f.boundary(off)
		}
		left := size - off
		if left == 0 {
			break
		}
		if left < 4 {
			damage(off, n, fmt.Sprintf("unexpected EOF in record header, wanted 4, got %d bytes", left), "",
				"truncated header: %d of 4 bytes", left)
			break
		}
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			readErr(off, err)
			break
		}
		l := int64(int32(binary.BigEndian.Uint32(hdr[:])))
		if l < 8 {
			damage(off, n, fmt.Sprintf("illegal header record length (%d)", l), fmt.Sprintf("illegal header record length (%d) in label record", l),
				"illegal length %d in header", l)
			break
		}
		if l > left {
			if left-4 < l-8 {
				pcp := fmt.Sprintf("EOF in %%s body, wanted %d, got %d bytes", l-8, left-4)
				damage(off, n, "unexpected "+fmt.Sprintf(pcp, "record"), "unexpected "+fmt.Sprintf(pcp, "label record"),
					"truncated: wanted %d bytes of body, got %d", l-8, left-4)
			} else {
				pcp := fmt.Sprintf("EOF in %%s trailer, wanted 4, got %d bytes", left-4-(l-8))
				damage(off, n, "unexpected "+fmt.Sprintf(pcp, "record"), "unexpected "+fmt.Sprintf(pcp, "label record"),
					"truncated: wanted 4 bytes of trailer, got %d", left-4-(l-8))
			}
			break
		}
		if l > MaxRecord {
			damage(off, n, "", "", "length %d is larger than any PCP record", l)
			c.out[len(c.out)-1].PCP = "" // pmlogcheck reads on and stops elsewhere
			break
		}
		if int64(cap(buf)) < l {
			buf = make([]byte, l)
		}
		rec := buf[:l]
		copy(rec, hdr[:])
		if _, err := io.ReadFull(br, rec[4:]); err != nil {
			readErr(off, err)
			break
		}
		if t := int64(binary.BigEndian.Uint32(rec[l-4:])); t != l {
			if t := int32(t); t < 8 {
				damage(off, n, fmt.Sprintf("illegal trailer record length (%d)", t), fmt.Sprintf("illegal trailer record length (%d) in label record", t),
					"length mismatch: header %d != trailer %d", l, t)
			} else {
				damage(off, n, fmt.Sprintf("length mismatch: header %d != trailer %d", l, t), fmt.Sprintf("label record length mismatch: header %d != trailer %d", l, t),
					"length mismatch: header %d != trailer %d", l, t)
			}
			break
		}
		if n == 0 {
			c.fileLabel(f, rec)
		} else if fn != nil && f.label != nil {
			fn(f, rec, off)
		}
		n++
		off += l
	}
	if f.role != roleIndex {
		f.records = n
	}
	if !f.damaged && f.records >= 0 && f.records < 2 {
		// libpcp will not open an archive whose .meta, .index or first
		// volume holds no more than a label; it skips other such volumes.
		sev, why := Error, "; PCP cannot open the archive"
		if f.role == roleData && f != c.vols[0] {
			sev, why = Warning, ""
		}
		what := "nothing after the label"
		if f.records == 0 {
			what = "the file is empty"
		}
		c.add(f, -1, 0, sev, "contains no PCP data (%s)%s", what, why)
		c.out[len(c.out)-1].PCP = f.path + ": contains no PCP data"
		c.out[len(c.out)-1].PCPEffect = PCPGoesOn
		if sev == Error {
			// pass 0 goes on; libpcp then will not open the archive
			c.out[len(c.out)-1].pcpNoOpen = fmt.Sprintf("pmlogcheck: cannot open archive \"%s\": %s\nChecking abandoned.", c.name, pcpErrNoData)
		}
	}
	c.info(f, 0, "found %d records", f.records)
}

// fileLabel checks the label record of f.
func (c *checker) fileLabel(f *archFile, rec []byte) {
	l, err := DecodeLabel(rec)
	if err != nil {
		c.add(f, 0, 0, Error, "bad label: %v", stripRecOffset(err))
		// pmlogcheck's words where libpcp cannot load the label for
		// its version; its other label checks are not modelled.
		if magic := binary.BigEndian.Uint32(rec[4:]); magic&0xff != 2 && magic&0xff != 3 {
			var pcp []string
			if magic&^0xff != pcpLogMagic {
				pcp = append(pcp, fmt.Sprintf("%s: bad label magic number: 0x%x not 0x%x as expected", f.path, magic&^0xff, pcpLogMagic))
			}
			pcp = append(pcp, fmt.Sprintf("%s: bad label version: %d not 2 or 3 as expected", f.path, magic&0xff),
				fmt.Sprintf("%s: cannot load label record: %s", f.path, pcpErrLabel))
			c.pcp(PCPFails, "%s", strings.Join(pcp, "\n"))
		} else if magic&^0xff != pcpLogMagic {
			// pass 0 says so and goes on; libpcp then refuses the
			// archive over it (badlabel-1)
			c.pcp(PCPGoesOn, "%s: bad label magic number: 0x%x not 0x%x as expected", f.path, magic&^0xff, pcpLogMagic)
			if f.role != roleData || f == c.vols[0] {
				c.out[len(c.out)-1].pcpNoOpen = fmt.Sprintf("pmlogcheck: cannot open archive \"%s\": %s\nChecking abandoned.", c.name, pcpErrLabel)
			}
		}
		return
	}
	f.label = &l
	frac := int64(int32(binary.BigEndian.Uint32(rec[16:])))
	if l.Version == 3 {
		frac = int64(int32(binary.BigEndian.Uint32(rec[20:])))
	}
	if frac < 0 || (l.Version == 2 && frac >= 1e6) || frac >= 1e9 {
		unit := "usec"
		if l.Version == 3 {
			unit = "nsec"
		}
		c.add(f, 0, 0, Error, "label start time is illegal: %d sec, %d %s", l.Start.Sec, frac, unit)
		f.badStart = true
	}
	if c.golden == nil {
		c.golden, c.goldenFile = f.label, f
	}
}

func stripRecOffset(err error) string {
	var re *recError
	if errors.As(err, &re) {
		return re.msg
	}
	return err.Error()
}

// indexEntries frames the entries of an index after its label.
func (c *checker) indexEntries(f *archFile, br *bufio.Reader, off, size int64) {
	version := c.versionOf(f)
	f.records = 1
	if version == 0 {
		f.records = -1 // no label anywhere says how big an entry is
		return
	}
	esz := int64(IndexEntrySize(version))
	buf := make([]byte, esz)
	for off < size {
		if size-off < esz {
			f.damaged = true
			c.add(f, off, 0, Error, "index entry %d: truncated: wanted %d bytes, got %d; the last valid entry ends at offset %d",
				f.records, esz, size-off, off)
			c.pcp(PCPFails, "%s[record %d]: unexpected EOF in index entry, wanted %d, got %d bytes", f.path, f.records, esz, size-off)
			return
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			f.damaged = true
			c.add(f, off, 0, Error, "read error: %v", err)
			return
		}
		ia := indexAt{e: DecodeIndexEntry(buf, version), off: off, version: version}
		if version == 2 {
			ia.usec = int64(int32(binary.BigEndian.Uint32(buf[4:])))
		}
		c.entries = append(c.entries, ia)
		f.records++
		off += esz
	}
}

// versionOf is the version f's records are in: its own label's, else the
// archive's.
func (c *checker) versionOf(f *archFile) int {
	if f.label != nil {
		return f.label.Version
	}
	if c.golden != nil {
		return c.golden.Version
	}
	return 0
}

// checkLabels compares the labels of all files, as pmlogcheck's pass 0 and
// libpcp's archive open do.
func (c *checker) checkLabels() {
	g := c.golden
	if g == nil {
		return
	}
	for _, f := range c.files {
		l := f.label
		if l == nil {
			continue
		}
		if l.Version != g.Version {
			c.add(f, 0, 0, Error, "label version %d differs from version %d in %s", l.Version, g.Version, c.goldenFile.path)
			continue
		}
		if int(l.Vol) != f.vol {
			c.add(f, 0, 0, Error, "label volume field is %d, expected %d for this file", l.Vol, f.vol)
		}
		if f != c.goldenFile {
			if l.Start != g.Start && !f.badStart && !c.goldenFile.badStart {
				c.add(f, 0, 0, Warning, "label start time %s differs from %s in %s", l.Start, g.Start, c.goldenFile.path)
			}
			if l.PID != g.PID {
				c.add(f, 0, 0, Error, "label pmlogger PID %d differs from PID %d in %s", l.PID, g.PID, c.goldenFile.path)
			}
			if l.Hostname != g.Hostname {
				c.add(f, 0, 0, Error, "label host %q differs from host %q in %s", l.Hostname, g.Hostname, c.goldenFile.path)
			}
		}
		if l.Version == 3 && l.Features&^FeatureQA != 0 {
			c.add(f, 0, 0, Error, "label has unknown feature bits 0x%x", l.Features&^FeatureQA)
		}
	}
}

// ---------------------------------------------------------------------------
// Metadata: pass 0's record type check, libpcp's load checks, and the
// records pass 2 and pass 3 need.

var metaTypeNames = map[uint32]string{
	TypeDesc: "DESC", TypeInDomV2: "INDOM_V2", TypeLabelV2: "LABEL_V2", TypeText: "TEXT",
	TypeInDom: "INDOM", TypeInDomDelta: "INDOM_DELTA", TypeLabel: "LABEL",
}

func (c *checker) metaRecord(f *archFile, rec []byte, off int64) {
	if c.pendTxt != 0 {
		// libpcp skipped the previous record without reading its
		// trailer and now reads garbage: the archive does not open.
		c.out[c.pendTxt-1].Severity = Error // (it was Info)
		c.out[c.pendTxt-1].Msg += ", and it is not the last record: libpcp cannot read past it"
		c.pendTxt = 0
		c.metaOK = false
	}
	if len(rec) < 12 {
		c.add(f, off, 2, Error, "metadata record of %d bytes has no type", len(rec))
		c.metaOK = false
		return
	}
	typ := binary.BigEndian.Uint32(rec[4:])
	version := c.versionOf(f)
	if name, known := metaTypeNames[typ]; known && !MetaVersionOK(typ, version) {
		c.add(f, off, 0, Error, "unexpected record type %s (%d) for a v%d archive", name, typ, version)
		// pmlogcheck's pass 0 reads the next record's header over the
		// status that records this: it never fails the run, and libpcp
		// then opens the archive. The record number counts the label as 0.
		c.pcp(PCPGoesOn, "%s[record %d]: unexpected record type %s (%d) for V%d archive", f.path, len(f.starts), name, typ, version)
		c.metaOK = false
		return
	}
	body := rec[8 : len(rec)-4]
	var err error
	switch typ {
	case TypeDesc:
		err = c.metaDesc(f, rec, off)
	case TypeInDomV2, TypeInDom, TypeInDomDelta:
		err = c.metaInDom(body, typ)
	case TypeLabelV2, TypeLabel:
		err = checkLabelSet(body, typ)
	case TypeText:
		if len(body) < 8 {
			err = fmt.Errorf("help text record too short (%d bytes)", len(body))
		} else if tt := binary.BigEndian.Uint32(body); tt&(stream.TextOneline|stream.TextHelp) == 0 || tt&(stream.TextPMID|stream.TextInDom) == 0 {
			// libpcp skips such a record without reading its trailer:
			// harmless only when it is the last one.
			c.add(f, off, 2, Info, "help text record of unknown type 0x%x, ignored by libpcp", tt)
			c.pendTxt = len(c.out)
			return
		}
	default:
		err = fmt.Errorf("unknown metadata record type %d", typ)
	}
	if err != nil {
		c.add(f, off, 2, Error, "%s", err)
		c.metaOK = false
		// libpcp refuses to open the archive over it.
		c.out[len(c.out)-1].PCPEffect = PCPNoOpen
		var le *libpcpError
		if errors.As(err, &le) {
			c.pcp(PCPNoOpen, "pmlogcheck: cannot open archive \"%s\": %s\nChecking abandoned.", c.name, le.errStr)
			c.out[len(c.out)-1].PCPDebug = le.debug
		}
	}
}

// libpcpError is damage for which libpcp refuses to open an archive,
// with libpcp's words for it.
type libpcpError struct {
	error
	errStr string // pmErrStr of the error the open fails with
	debug  string // what libpcp prints under -Dlogmeta
}

func (e *libpcpError) Unwrap() error { return e.error }

// badInDom is a refused instance domain record: msg in this package's
// words, debug in libpcp's.
func badInDom(msg, debug string) error {
	return &libpcpError{error: errors.New(msg), errStr: pcpErrLogRec, debug: "__pmLogLoadInDom: InDom: " + debug}
}

func (c *checker) metaDesc(f *archFile, rec []byte, off int64) error {
	r, err := DecodeMeta(rec)
	if err != nil {
		return fmt.Errorf("bad descriptor record: %s", stripRecOffset(err))
	}
	d := r.(*stream.Desc)
	if old := c.byPMID[d.PMID]; old != nil {
		o := old.d
		what := ""
		switch {
		case d.Type != o.Type:
			what = fmt.Sprintf("type %d, was %d", d.Type, o.Type)
		case d.Sem != o.Sem:
			what = fmt.Sprintf("semantics %d, was %d", d.Sem, o.Sem)
		case d.InDom != o.InDom:
			what = fmt.Sprintf("instance domain %s, was %s", d.InDom, o.InDom)
		case d.Units&^0xff != o.Units&^0xff: // the low byte is padding
			what = fmt.Sprintf("units 0x%08x, was 0x%08x", uint32(d.Units), uint32(o.Units))
		}
		if what != "" {
			return fmt.Errorf("descriptor for PMID %s changes %s (at offset %d): libpcp refuses the archive", d.PMID, what, old.off)
		}
	} else {
		da := &descAt{d: d, off: off}
		c.descs = append(c.descs, da)
		c.byPMID[d.PMID] = da
	}
	for _, n := range d.Names {
		c.pmns.add(n, d.PMID)
	}
	return nil
}

// metaInDom applies libpcp's checks to an instance domain record and keeps
// instance names for messages.
func (c *checker) metaInDom(body []byte, typ uint32) error {
	fixed := 20 // timestamp (v3), indom, count
	if typ == TypeInDomV2 {
		fixed = 16
	}
	if len(body) < fixed {
		return fmt.Errorf("instance domain record too short (%d bytes)", len(body))
	}
	id := stream.InDomID(binary.BigEndian.Uint32(body[fixed-8:]))
	n := int64(int32(binary.BigEndian.Uint32(body[fixed-4:])))
	if n < 0 {
		return fmt.Errorf("instance domain %s: negative instance count %d", id, n)
	}
	if n == 0 {
		// libpcp keeps no instances from an empty record, but a delta
		// after it is sound: PCP's own pmaDeltaInDom writes one against
		// it (pmlogextract does, and pcpextract with it), and libpcp
		// resolves it to the instances it adds (F7 in docs/reliability.md).
		if typ != TypeInDomDelta {
			c.fullDom[id] = true
		}
		return nil
	}
	if n*8 > int64(len(body)-fixed) {
		return fmt.Errorf("instance domain %s: %d instances do not fit in %d bytes", id, n, len(body)-fixed)
	}
	if typ == TypeInDomDelta && !c.fullDom[id] {
		return fmt.Errorf("instance domain %s: delta record before any full record", id)
	}
	if typ != TypeInDomDelta {
		c.fullDom[id] = true
	}
	insts := body[fixed : fixed+int(n)*4]
	idx := body[fixed+int(n)*4 : fixed+int(n)*8]
	strs := body[fixed+int(n)*8:]
	names := c.instNam[id]
	if names == nil {
		names = map[int32]string{}
		c.instNam[id] = names
	}
	for i := 0; i < int(n); i++ {
		inst := int32(binary.BigEndian.Uint32(insts[4*i:]))
		s := int32(binary.BigEndian.Uint32(idx[4*i:]))
		if inst < 0 {
			return badInDom(fmt.Sprintf("instance domain %s: bad instance identifier %d", id, inst),
				fmt.Sprintf("%s: instance[%d]: bad instance identifier (%d)", id, i, inst))
		}
		switch {
		case s >= 0:
			if int(s) > len(strs) {
				return badInDom(fmt.Sprintf("instance domain %s: name offset %d of instance %d beyond the %d-byte string table", id, s, inst, len(strs)),
					fmt.Sprintf("%s instance[%d]: bad string index (%d) > max index based on record length (%d)", id, i, s, len(strs)))
			}
			names[inst] = cstring(strs[s:])
		case typ == TypeInDomDelta && s == -1:
			// a deletion; keep the name for messages about older data
		default:
			return badInDom(fmt.Sprintf("instance domain %s: bad name offset %d for instance %d", id, s, inst),
				fmt.Sprintf("%s instance[%d]: bad string index (%d)", id, i, s))
		}
	}
	return nil
}

// checkLabelSet applies libpcp's checks to a label set record.
func checkLabelSet(body []byte, typ uint32) error {
	d := decbuf{b: body}
	version := 3
	if typ == TypeLabelV2 {
		version = 2
	}
	d.stamp(version)
	d.u32("label type")
	d.u32("label ident")
	n := d.i32("number of label sets")
	if d.err != nil {
		return fmt.Errorf("label set record: %s", stripRecOffset(d.err))
	}
	if n < 0 || int64(n)*12 > int64(d.left()) {
		return fmt.Errorf("label set record claims %d sets in %d bytes", n, d.left())
	}
	for i := 0; i < int(n); i++ {
		d.i32("instance")
		jl := d.i32("json length")
		if d.err == nil && (jl < 0 || jl > 1<<16-1) {
			return fmt.Errorf("label set %d: bad JSON length %d", i, jl)
		}
		d.bytes(int(jl), "label JSON")
		nl := d.i32("number of labels")
		if d.err != nil {
			return fmt.Errorf("label set record: %s", stripRecOffset(d.err))
		}
		if nl > 0 {
			if nl > 255 || int64(nl)*8 > int64(d.left()) {
				return fmt.Errorf("label set %d: %d labels in %d bytes", i, nl, d.left())
			}
			d.bytes(int(nl)*8, "labels")
		}
	}
	return nil
}

// pmnsModel mirrors how libpcp builds an archive's namespace from the
// descriptor names: the first PMID to claim a name keeps it, and a name
// that is an inner node of the tree cannot become a metric.
type pmnsModel struct {
	leaf  map[string]stream.PMID
	inner map[string]bool
	names map[stream.PMID][]string
}

func (p *pmnsModel) add(name string, id stream.PMID) {
	if p.leaf == nil {
		p.leaf = map[string]stream.PMID{}
		p.inner = map[string]bool{}
		p.names = map[stream.PMID][]string{}
	}
	if _, ok := p.leaf[name]; ok || p.inner[name] {
		return
	}
	p.leaf[name] = id
	p.names[id] = append(p.names[id], name)
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			p.inner[name[:i]] = true
		}
	}
}

// metricName prints a PMID as pmlogcheck does: all its names joined with
// " or ", or the PMID itself.
func (c *checker) metricName(id stream.PMID) string {
	if ns := c.pmns.names[id]; len(ns) > 0 {
		return strings.Join(ns, " or ")
	}
	return id.String()
}

// ---------------------------------------------------------------------------
// Pass 1: the temporal index.

func (c *checker) pass1() {
	if c.index == nil {
		c.addPath(c.archiveBase()+".index", 1, Warning, "temporal index is missing")
		c.pcp(PCPGoesOn, "%s: warning temporal index is missing", c.archiveBase())
		return
	}
	if len(c.entries) == 0 {
		return // pass 0 said why
	}
	f := c.index
	labelSize := int64(LabelSize(c.entries[0].version))
	metaSize := int64(-1)
	if c.meta != nil {
		metaSize = c.meta.size
	}
	vols := map[int]*archFile{}
	for _, v := range c.vols {
		vols[v.vol] = v
	}
	var last *indexAt
	logSize := int64(-1)
	for i := range c.entries {
		ia := &c.entries[i]
		e := ia.e
		n := i + 1
		// bad reports a bad entry in our words (msg) and pmlogcheck's.
		bad := func(msg, pcp string) {
			c.add(f, ia.off, 1, Error, "entry %d: %s", n, msg)
			c.pcp(PCPGoesOn, "%s.index[entry %d]: %s", c.archiveBase(), n, pcp)
		}
		stamp := func(t stream.Timestamp, usec int64, version int) string {
			nsec := int64(t.Nsec)
			if version == 2 {
				nsec = usec * 1000
			}
			return fmt.Sprintf("%d.%09d", t.Sec, nsec)
		}
		if e.Vol < 0 {
			bad(fmt.Sprintf("illegal negative volume number %d", e.Vol),
				fmt.Sprintf("illegal negative volume number %d", e.Vol))
			logSize = -1
		} else if last == nil || e.Vol != last.e.Vol {
			logSize = -1
			if v := vols[int(e.Vol)]; v != nil && v.size >= 0 {
				logSize = v.size
			} else if v == nil {
				c.addPath(fmt.Sprintf("%s.%d", c.archiveBase(), e.Vol), 1, Warning, "file missing for data volume %d named by index entry %d", e.Vol, n)
				c.pcp(PCPGoesOn, "%s.%d: file missing for log volume %d", c.archiveBase(), e.Vol, e.Vol)
			}
		}
		nsec := int64(e.T.Nsec)
		if ia.version == 2 {
			nsec = ia.usec * 1000
		}
		if e.T.Sec < 0 || nsec < 0 {
			bad(fmt.Sprintf("illegal negative timestamp (%d sec, %d nsec)", e.T.Sec, nsec),
				fmt.Sprintf("illegal negative timestamp value (%d sec, %d nsec)", e.T.Sec, nsec))
		}
		if nsec > 999999999 {
			msg := fmt.Sprintf("illegal timestamp nsec value (%d sec, %d nsec)", e.T.Sec, nsec)
			bad(msg, msg)
		}
		if e.MetaOff < labelSize {
			bad(fmt.Sprintf("offset to metadata (%d) before the end of the label (%d)", e.MetaOff, labelSize),
				fmt.Sprintf("offset to metadata (%d) before end of label record (%d)", e.MetaOff, labelSize))
		}
		if metaSize >= 0 && e.MetaOff > metaSize {
			bad(fmt.Sprintf("offset to metadata (%d) past the end of the file (%d)", e.MetaOff, metaSize),
				fmt.Sprintf("offset to metadata (%d) past end of file (%d)", e.MetaOff, metaSize))
		}
		if e.DataOff < labelSize {
			bad(fmt.Sprintf("offset to data (%d) before the end of the label (%d)", e.DataOff, labelSize),
				fmt.Sprintf("offset to log (%d) before end of label record (%d)", e.DataOff, labelSize))
		}
		if logSize >= 0 && e.DataOff > logSize {
			bad(fmt.Sprintf("offset to data (%d) past the end of volume %d (%d)", e.DataOff, e.Vol, logSize),
				fmt.Sprintf("offset to log (%d) past end of file (%d)", e.DataOff, logSize))
		}
		// libpcp reads from the first entry's data offset whenever it
		// replays from the start (pmlogcheck's pass 3 then fails), and
		// from later entries' when asked to start later; it never seeks
		// by the metadata offsets.
		if v := vols[int(e.Vol)]; v != nil && e.DataOff >= labelSize && v.misaligned[e.DataOff] {
			if i == 0 {
				c.add(f, ia.off, 1, Error, "entry %d: offset to data (%d) is not the start of a record in volume %d: replay from the start fails", n, e.DataOff, e.Vol)
			} else {
				c.add(f, ia.off, 1, Info, "entry %d: offset to data (%d) is not the start of a record in volume %d: replay from %s would fail", n, e.DataOff, e.Vol, e.T)
			}
		}
		if m := c.meta; m != nil && len(m.starts) > 0 && e.MetaOff >= labelSize && e.MetaOff <= m.starts[len(m.starts)-1] {
			if _, found := slices.BinarySearch(m.starts, e.MetaOff); !found {
				c.add(f, ia.off, 1, Info, "entry %d: offset to metadata (%d) is not the start of a record", n, e.MetaOff)
			}
		}
		if g := c.golden; g != nil && g.Start.Sec != 0 && e.T.Before(g.Start) {
			bad(fmt.Sprintf("timestamp %s before the label's start %s", e.T, g.Start),
				fmt.Sprintf("timestamp (%s) less than log label timestamp (%d.%09d)", stamp(e.T, ia.usec, ia.version), g.Start.Sec, g.Start.Nsec))
		}
		if last != nil {
			p := last.e
			if e.T.Before(p.T) {
				bad(fmt.Sprintf("timestamp %s went backwards (from %s at entry %d)", e.T, p.T, n-1),
					fmt.Sprintf("timestamp (%s) went backwards in time (from %s at [entry %d])", stamp(e.T, ia.usec, ia.version), stamp(p.T, last.usec, last.version), n-1))
			}
			if e.Vol < p.Vol {
				bad(fmt.Sprintf("volume number %d decreased (from %d at entry %d)", e.Vol, p.Vol, n-1),
					fmt.Sprintf("volume number (%d) decreased (from %d at [entry %d])", e.Vol, p.Vol, n-1))
			}
			if e.Vol == p.Vol && e.MetaOff < p.MetaOff {
				bad(fmt.Sprintf("offset to metadata %d decreased (from %d at entry %d)", e.MetaOff, p.MetaOff, n-1),
					fmt.Sprintf("offset to metadata (%d) decreased (from %d at [entry %d])", e.MetaOff, p.MetaOff, n-1))
			}
			if e.Vol == p.Vol && e.DataOff < p.DataOff {
				bad(fmt.Sprintf("offset to data %d decreased (from %d at entry %d)", e.DataOff, p.DataOff, n-1),
					fmt.Sprintf("offset to log (%d) decreased (from %d at [entry %d])", e.DataOff, p.DataOff, n-1))
			}
		}
		last = ia
	}
	c.info(f, 1, "checked %d index entries", len(c.entries))
}

// ---------------------------------------------------------------------------
// Pass 2: the metric descriptors.

func (c *checker) pass2() {
	if c.meta == nil {
		return
	}
	f := c.meta
	keys := make([]uint32, len(c.descs))
	for i, da := range c.descs {
		keys[i] = uint32(da.d.PMID)
	}
	rank := hashWalkOrder(keys)
	base := c.archiveBase()
	for i, da := range c.descs {
		d := da.d
		name := "unknown"
		if ns := c.pmns.names[d.PMID]; len(ns) > 0 {
			name = ns[0]
		} else {
			c.add(f, da.off, 2, Warning, "PMID %s has no name", d.PMID)
			c.out[len(c.out)-1].pcpRank = rank[i]
		}
		if d.Type == stream.TypeNoSupport {
			continue
		}
		// bad reports a bad descriptor; pmlogcheck's words differ from
		// ours in naming the descriptor "pmDesc".
		bad := func(sev Severity, format string, args ...any) {
			msg := fmt.Sprintf(format, args...)
			c.add(f, da.off, 2, sev, "%s [%s]: %s", name, d.PMID, msg)
			c.pcp(PCPGoesOn, "%s.meta: %s [%s]: %s", base, name, d.PMID, strings.Replace(msg, " descriptor", " pmDesc", 1))
			c.out[len(c.out)-1].pcpRank = rank[i]
		}
		if d.Type < stream.Type32 || d.Type > stream.TypeHighresEvent {
			bad(Error, "bad type (%d) in descriptor", d.Type)
		}
		if d.InDom != stream.InDomNull && d.PMID.Domain() != d.InDom.Domain() {
			bad(Warning, "domain of PMID (%d) != domain of instance domain (%d)", d.PMID.Domain(), d.InDom.Domain())
			c.out[len(c.out)-1].PCP = fmt.Sprintf("%s.meta: %s [%s]: domain of pmid (%d) != domain of indom (%d)", base, name, d.PMID, d.PMID.Domain(), d.InDom.Domain())
		}
		if d.Sem != stream.SemCounter && d.Sem != stream.SemInstant && d.Sem != stream.SemDiscrete {
			bad(Error, "bad semantics (%d) in descriptor", d.Sem)
		}
		u := d.Units
		for _, dim := range []struct {
			n string
			v int
		}{{"Space", u.DimSpace()}, {"Time", u.DimTime()}, {"Count", u.DimCount()}} {
			if dim.v < -2 || dim.v > 2 {
				bad(Warning, "bad dimension (%d) for %s in descriptor", dim.v, dim.n)
			}
		}
		if u.DimSpace() == 0 && u.ScaleSpace() != 0 {
			bad(Warning, "non-zero scale (%d) with zero dimension for Space in descriptor", u.ScaleSpace())
		}
		if u.ScaleSpace() > 6 {
			bad(Warning, "bad scale (%d) for Space in descriptor", u.ScaleSpace())
		}
		if u.DimTime() == 0 && u.ScaleTime() != 0 {
			bad(Warning, "non-zero scale (%d) with zero dimension for Time in descriptor", u.ScaleTime())
		}
		if u.ScaleTime() > 5 {
			bad(Warning, "bad scale (%d) for Time in descriptor", u.ScaleTime())
		}
		if u.DimCount() == 0 && u.ScaleCount() != 0 {
			bad(Warning, "non-zero scale (%d) with zero dimension for Count in descriptor", u.ScaleCount())
		}
	}
	c.info(f, 2, "checked %d metric descriptors", len(c.descs))
}

// ---------------------------------------------------------------------------
// Pass 3: the data records.

// metricState is pass 3's memory of one metric, as pmlogcheck keeps it.
type metricState struct {
	skip   bool // no descriptor, or not numeric: nothing to check
	desc   *stream.Desc
	valfmt uint32
	insts  []instState
	pos    map[int32]int // first position of each instance in insts
	dups   bool          // an instance appears twice in insts
}

type posMetric struct {
	id stream.PMID
	m  *metricState
}

func (c *checker) setPos(i int, id stream.PMID, m *metricState) {
	for len(c.byPos) <= i {
		c.byPos = append(c.byPos, posMetric{id: stream.PMIDNull})
	}
	c.byPos[i] = posMetric{id, m}
}

type instState struct {
	inst  int32
	last  float64
	t     stream.Timestamp
	epoch int
}

type limitKey struct {
	id   stream.PMID
	kind int
}

// Kinds of per-metric problem that are reported once, with a count.
const (
	limNoDesc = iota
	limValfmt
	limExtract
)

// once reports the first problem of a kind for a metric; later ones are
// counted into a summary at the end of pass 3.
func (c *checker) once(k limitKey, f *archFile, off int64, msg func() string) {
	c.limits[k]++
	if c.limits[k] == 1 {
		c.limitOut[k] = c.addLazy(f, off, 3, Error, msg)
	}
}

func (c *checker) dataRecord(f *archFile, rec []byte, off int64) {
	if !c.p3 || c.p3ended {
		return
	}
	version := f.label.Version
	h := DataHeaderSize(version)
	if len(rec) < h+8 {
		c.add(f, off, 3, Error, "corrupted data record: %d bytes is too short for a result", len(rec))
		return
	}
	t := DecodeTimestamp(rec[4:], version)
	body := rec[h : len(rec)-4]
	if s := c.opts.Start; s != nil && t.Before(*s) {
		return
	}
	if msg := checkResultBody(body, version); msg != "" {
		c.add(f, off, 3, Error, "corrupted data record at %s: %s", t, msg)
		return
	}
	c.results++
	if frac, max := int64(int32(binary.BigEndian.Uint32(rec[h-4:]))), int64(1e9); version == 2 {
		if frac < 0 || frac >= max/1000 {
			c.add(f, off, 3, Error, "illegal timestamp: %d sec, %d usec", int32(binary.BigEndian.Uint32(rec[4:])), frac)
			return
		}
	} else if frac < 0 || frac >= max {
		c.add(f, off, 3, Error, "illegal timestamp: %d sec, %d nsec", t.Sec, frac)
		return
	}
	if !c.lastSeen {
		c.firstT = t
		if s := c.opts.Start; s != nil {
			c.lastT = *s
		}
		c.lastSeen = true
	}
	if g := c.golden; g != nil && t.Before(g.Start) {
		start := g.Start
		c.addLazy(f, off, 3, Error, func() string {
			return fmt.Sprintf("[%s] timestamp before the label's start %s", c.stamp(t), c.stamp(start))
		})
		c.pcp3(f, t, func() string { return ": timestamp before label timestamp: " + c.stamp(start) })
	}
	if t.Before(c.lastT) {
		prev := c.lastT
		c.addLazy(f, off, 3, Error, func() string {
			return fmt.Sprintf("[%s] timestamp went backwards, prior timestamp %s", c.stamp(t), c.stamp(prev))
		})
		c.pcp3(f, t, func() string { return ": timestamp went backwards, prior timestamp: " + c.stamp(prev) })
	}
	c.lastT = t
	if e := c.opts.End; e != nil && t.After(*e) {
		c.p3ended = true
		return
	}
	if binary.BigEndian.Uint32(body) == 0 {
		c.marks++
		c.epoch++
		return
	}
	c.values(f, off, t, body, version)
}

// checkResultBody applies libpcp's __pmDecodeResult checks to a result
// body (numpmid onwards): every value set lies inside the record, pointer
// values point at value blocks that fit, the value blocks start right
// after the value sets and fill the rest of the record exactly.
func checkResultBody(body []byte, version int) string {
	n := int64(len(body))
	base := int64(stream.PointerBase(uint8(version)))
	pdulen := 4*base + n // bytes from the PDU's start, as libpcp counts them
	numpmid := int64(int32(binary.BigEndian.Uint32(body)))
	if numpmid < 0 || numpmid > pdulen {
		return fmt.Sprintf("bad numpmid %d", numpmid)
	}
	pos := int64(4)
	minBlock := n
	var blocks int64
	for i := int64(0); i < numpmid; i++ {
		if pos+8 > n {
			return fmt.Sprintf("value set %d runs past the end of the record", i)
		}
		id := stream.PMID(binary.BigEndian.Uint32(body[pos:]))
		numval := int64(int32(binary.BigEndian.Uint32(body[pos+4:])))
		if numval > pdulen {
			return fmt.Sprintf("metric %s: %d values cannot fit", id, numval)
		}
		if numval <= 0 {
			pos += 8
			continue
		}
		if pos+12 > n {
			return fmt.Sprintf("metric %s: value format runs past the end of the record", id)
		}
		valfmt := binary.BigEndian.Uint32(body[pos+8:])
		pairs := pos + 12
		pos = pairs + 8*numval
		if valfmt == stream.ValInsitu {
			continue
		}
		if valfmt != stream.ValDptr && valfmt != stream.ValSptr {
			return fmt.Sprintf("metric %s: bad value format %d", id, valfmt)
		}
		for j := int64(0); j < numval; j++ {
			p := pairs + 8*j
			if p+8 > n {
				return fmt.Sprintf("metric %s: value %d runs past the end of the record", id, j)
			}
			w := int64(int32(binary.BigEndian.Uint32(body[p+4:])))
			if w < 0 || w > pdulen {
				return fmt.Sprintf("metric %s: value %d: bad value pointer %d", id, j, w)
			}
			boff := (w - base) * 4
			if boff < 0 || boff+4 > n {
				return fmt.Sprintf("metric %s: value %d: pointer %d outside the value blocks", id, j, w)
			}
			vlen := int64(binary.BigEndian.Uint32(body[boff:]) & 0xffffff)
			if vlen < 4 || boff+vlen > n {
				return fmt.Sprintf("metric %s: value %d: value block length %d does not fit the record", id, j, vlen)
			}
			if vt := stream.Type(body[boff]); vt == stream.TypeEvent || vt == stream.TypeHighresEvent {
				if msg := checkEventArray(body[boff:boff+vlen], vt == stream.TypeHighresEvent); msg != "" {
					return fmt.Sprintf("metric %s: value %d: %s", id, j, msg)
				}
			}
			minBlock = min(minBlock, boff)
			blocks += (vlen + 3) &^ 3
		}
	}
	if pos != minBlock {
		if minBlock == n {
			return fmt.Sprintf("value sets end at byte %d of a %d-byte body", pos, n)
		}
		return fmt.Sprintf("value blocks start at byte %d, not right after the value sets (byte %d)", minBlock, pos)
	}
	if pos+blocks != n {
		return fmt.Sprintf("value blocks take %d bytes, but %d bytes follow the value sets", blocks, n-pos)
	}
	return ""
}

// checkEventArray checks that the records and parameters of an event
// array lie inside its value block. libpcp walks (and byte-swaps) them
// without bounds checks when it decodes the record, so damage here makes
// every PCP tool read out of bounds (pmlogcheck usually crashes).
func checkEventArray(blk []byte, highres bool) string {
	n := int64(len(blk))
	if n < 8 {
		return "event array too short for its record count"
	}
	nrec := int64(int32(binary.BigEndian.Uint32(blk[4:])))
	if nrec < 0 || nrec > n {
		return fmt.Sprintf("bad event record count %d", nrec)
	}
	recHdr := int64(16)
	if highres {
		recHdr = 24
	}
	pos := int64(8)
	for r := int64(0); r < nrec; r++ {
		if pos+recHdr > n {
			return fmt.Sprintf("event record %d runs past the end of its value block", r)
		}
		flags := binary.BigEndian.Uint32(blk[pos+recHdr-8:])
		nparams := int64(int32(binary.BigEndian.Uint32(blk[pos+recHdr-4:])))
		pos += recHdr
		if flags&(1<<31) != 0 { // PM_EVENT_FLAG_MISSED: nparams counts missed events
			continue
		}
		if nparams < 0 || nparams > n {
			return fmt.Sprintf("event record %d: bad parameter count %d", r, nparams)
		}
		for p := int64(0); p < nparams; p++ {
			if pos+8 > n {
				return fmt.Sprintf("event record %d: parameter %d runs past the end of its value block", r, p)
			}
			plen := int64(binary.BigEndian.Uint32(blk[pos+4:]) & 0xffffff)
			if plen < 4 || pos+4+((plen+3)&^3) > n {
				return fmt.Sprintf("event record %d: parameter %d of length %d runs past the end of its value block", r, p, plen)
			}
			pos += 4 + (plen+3)&^3
		}
	}
	return ""
}

// values is pmlogcheck's per-value check of one (structurally sound)
// result: value formats, value extraction and counter wraps.
func (c *checker) values(f *archFile, off int64, t stream.Timestamp, body []byte, version int) {
	base := int64(stream.PointerBase(uint8(version)))
	numpmid := int(binary.BigEndian.Uint32(body))
	pos := 4
	for i := 0; i < numpmid; i++ {
		id := stream.PMID(binary.BigEndian.Uint32(body[pos:]))
		numval := int(int32(binary.BigEndian.Uint32(body[pos+4:])))
		if numval <= 0 {
			pos += 8
			continue
		}
		vs := vset{body: body, base: base, valfmt: binary.BigEndian.Uint32(body[pos+8:]), pairs: body[pos+12 : pos+12+8*numval]}
		pos += 12 + 8*numval
		// Loggers write the metrics of a record in the same order every
		// time: try the metric seen at this position last time first.
		var m *metricState
		if i < len(c.byPos) && c.byPos[i].id == id {
			m = c.byPos[i].m
		} else {
			m = c.metrics[id]
			if m != nil {
				c.setPos(i, id, m)
			}
		}
		if m == nil {
			m = c.newMetric(f, off, t, id, vs.valfmt)
			c.setPos(i, id, m)
			if m.skip {
				continue
			}
			for j := 0; j < numval; j++ {
				c.newInst(f, off, t, m, &vs, j)
			}
			continue
		}
		if m.skip {
			continue
		}
		if vs.valfmt != m.valfmt {
			have, want := vs.valfmt, m.valfmt
			msg := func() string {
				return fmt.Sprintf("[%s] %s: value format %d, not %d as in earlier records", c.stamp(t), c.metricName(id), have, want)
			}
			if !c.opts.EveryRecord {
				c.once(limitKey{id, limValfmt}, f, off, msg)
				continue
			}
			// pmlogcheck's words, in each record
			c.addLazy(f, off, 3, Error, msg)
			c.pcp3(f, t, func() string {
				return fmt.Sprintf(" %s: encoding botch valfmt=%d not %d as expected", c.metricName(id), have, want)
			})
			continue
		}
		d := m.desc
		hint := 0
		for j := 0; j < numval; j++ {
			inst := vs.inst(j)
			// Find the instance's history the way pmlogcheck does: by
			// position first, then by search (here: the slot after the
			// last one found, then the map); a singular metric always
			// uses the first slot.
			k := j
			if numval > 1 || d.InDom != stream.InDomNull {
				if k < len(m.insts) && m.insts[k].inst != inst {
					if hint < len(m.insts) && m.insts[hint].inst == inst && !m.dups {
						k = hint
					} else {
						p, ok := m.pos[inst]
						if !ok {
							c.newInst(f, off, t, m, &vs, j)
							continue
						}
						k = p
					}
				} else if k >= len(m.insts) {
					c.newInst(f, off, t, m, &vs, j)
					continue
				}
			}
			if k >= len(m.insts) {
				c.newInst(f, off, t, m, &vs, j)
				continue
			}
			hint = k + 1
			is := &m.insts[k]
			lastT := is.t
			if is.epoch != c.epoch {
				lastT.Sec = 0 // a <mark> since: no history
			}
			v, ok := vs.value(j, d.Type)
			if !ok {
				c.extractFailed(f, off, t, m, j)
				continue
			}
			if d.Sem == stream.SemCounter {
				if !t.After(lastT) {
					continue // no time has passed: pmlogcheck skips the value
				}
				if !c.opts.NoWrap && v < is.last && lastT.Sec > 0 {
					c.wrap(f, off, t, m, inst, is.last, lastT, v)
				}
			}
			is.last, is.t, is.epoch = v, t, c.epoch
		}
	}
}

// vset is one value set of a checked result body.
type vset struct {
	body   []byte
	base   int64
	valfmt uint32
	pairs  []byte
}

func (v *vset) inst(j int) int32 { return int32(binary.BigEndian.Uint32(v.pairs[8*j:])) }

func (v *vset) value(j int, t stream.Type) (float64, bool) {
	w := binary.BigEndian.Uint32(v.pairs[8*j+4:])
	var blk []byte
	if v.valfmt != stream.ValInsitu {
		blk = v.body[(int64(w)-v.base)*4:]
	}
	return extractValue(v.valfmt, w, blk, t)
}

func (c *checker) newMetric(f *archFile, off int64, t stream.Timestamp, id stream.PMID, valfmt uint32) *metricState {
	m := &metricState{valfmt: valfmt}
	c.metrics[id] = m
	da := c.byPMID[id]
	if da == nil {
		m.skip = true
		if c.metaOK {
			c.once(limitKey{id, limNoDesc}, f, off, func() string {
				return fmt.Sprintf("[%s] %s: no descriptor for this metric in the metadata", c.stamp(t), c.metricName(id))
			})
			if c.limits[limitKey{id, limNoDesc}] == 1 {
				c.pcp3(f, t, func() string {
					return fmt.Sprintf(" %s: pmLookupDesc failed: %s", c.metricName(id), pcpErrNoDesc)
				})
			}
		}
		return m
	}
	m.desc = da.d
	m.skip = !da.d.Type.Numeric() // pmlogcheck checks numeric metrics only
	return m
}

// newInst starts the history of an instance. (pmlogcheck gives up on the
// whole archive when the value cannot be extracted; Check reports it and
// carries on.)
func (c *checker) newInst(f *archFile, off int64, t stream.Timestamp, m *metricState, vs *vset, j int) {
	v, ok := vs.value(j, m.desc.Type)
	if !ok {
		if c.extractFailed(f, off, t, m, j) {
			// pmlogcheck gives up on the archive here.
			c.out[len(c.out)-1].PCPEffect = PCPExits
			prev := c.out[len(c.out)-1].lazyPCP
			c.out[len(c.out)-1].lazyPCP = func() string { return prev() + "\npmlogcheck: possibly corrupt archive?" }
		}
		return
	}
	inst := vs.inst(j)
	if m.pos == nil {
		m.pos = map[int32]int{}
	}
	if _, dup := m.pos[inst]; dup {
		m.dups = true
	} else {
		m.pos[inst] = len(m.insts)
	}
	m.insts = append(m.insts, instState{inst: inst, last: v, t: t, epoch: c.epoch})
}

// extractFailed reports a value pmExtractValue refuses, and whether the
// report is a new finding (the last one added).
func (c *checker) extractFailed(f *archFile, off int64, t stream.Timestamp, m *metricState, j int) bool {
	id, typ, valfmt := m.desc.PMID, m.desc.Type, m.valfmt
	k := limitKey{id, limExtract}
	c.once(k, f, off, func() string {
		how := "insitu"
		if valfmt != stream.ValInsitu {
			how = "a value block"
		}
		return fmt.Sprintf("[%s] %s: value %d cannot be read as %s from %s", c.stamp(t), c.metricName(id), j, typeName(typ), how)
	})
	if c.limits[k] != 1 {
		return false
	}
	c.pcp3(f, t, func() string {
		return fmt.Sprintf(" %s: pmExtractValue failed: %s", c.metricName(id), pcpErrConvert)
	})
	return true
}

// pcp3 sets pmlogcheck's wording of the last finding added, a pass 3 one
// about the record at t in volume f: "ARCHIVE.VOL:[TIME]" and then what
// msg builds once the times can be printed.
func (c *checker) pcp3(f *archFile, t stream.Timestamp, msg func() string) {
	base := c.archiveBase()
	c.out[len(c.out)-1].lazyPCP = func() string {
		return fmt.Sprintf("%s.%d:[%s]%s", base, f.vol, c.stamp(t), msg())
	}
}

func (c *checker) wrap(f *archFile, off int64, t stream.Timestamp, m *metricState, inst int32, prev float64, prevT stream.Timestamp, v float64) {
	d := m.desc
	var kind string
	switch d.Type {
	case stream.Type32:
		kind = "signed 32-bit"
	case stream.TypeU32:
		kind = "unsigned 32-bit"
	case stream.Type64:
		kind = "signed 64-bit"
	case stream.TypeU64:
		kind = "unsigned 64-bit"
	default:
		return // pmlogcheck does not see a wrap in a floating point counter
	}
	instName := ""
	if d.InDom != stream.InDomNull {
		if n, ok := c.instNam[d.InDom][inst]; ok {
			instName = "[" + n + "]"
		}
	}
	c.addLazy(f, off, 3, Warning, func() string {
		return fmt.Sprintf("[%s] %s%s: %s wrap: value %.0f at %s, then %.0f at %s",
			c.stamp(t), c.metricName(d.PMID), instName, kind, prev, c.stamp(prevT), v, c.stamp(t))
	})
	verbose := c.opts.Verbose
	c.pcp3(f, t, func() string {
		s := fmt.Sprintf(": %s%s: %s wrap\n\tvalue %.0f at %s\n\tvalue %.0f at %s",
			c.metricName(d.PMID), instName, kind, prev, c.stamp(prevT), v, c.stamp(t))
		if verbose {
			s += fmt.Sprintf("\n\tdifference %.0f", v-prev)
		}
		return s
	})
}

func typeName(t stream.Type) string {
	switch t {
	case stream.Type32:
		return "a 32-bit integer"
	case stream.TypeU32:
		return "an unsigned 32-bit integer"
	case stream.Type64:
		return "a 64-bit integer"
	case stream.TypeU64:
		return "an unsigned 64-bit integer"
	case stream.TypeFloat:
		return "a float"
	case stream.TypeDouble:
		return "a double"
	}
	return fmt.Sprintf("type %d", t)
}

// extractValue converts a value to float64 as pmExtractValue(..., DOUBLE)
// does, refusing what it refuses: 64-bit and double values insitu, 32-bit
// values in a block, and a block whose length or type does not match.
func extractValue(valfmt, w uint32, blk []byte, t stream.Type) (float64, bool) {
	if valfmt == stream.ValInsitu {
		switch t {
		case stream.Type32:
			return float64(int32(w)), true
		case stream.TypeU32:
			return float64(w), true
		case stream.TypeFloat:
			return float64(math.Float32frombits(w)), true
		}
		return 0, false
	}
	hdr := binary.BigEndian.Uint32(blk)
	vtype, vlen := stream.Type(hdr>>24), hdr&0xffffff
	if vtype != t && vtype != 0 {
		return 0, false
	}
	// libpcp converts a block's payload from network byte order according
	// to the block's own type; a block of type 0 (written by very old PCP)
	// is left alone and so read in the host's order. pmlogcheck's verdicts
	// on such archives are those of a little-endian host.
	var order binary.ByteOrder = binary.BigEndian
	if vtype == 0 {
		order = binary.LittleEndian
	}
	switch t {
	case stream.Type64:
		if vlen == 12 {
			return float64(int64(order.Uint64(blk[4:]))), true
		}
	case stream.TypeU64:
		if vlen == 12 {
			return float64(order.Uint64(blk[4:])), true
		}
	case stream.TypeDouble:
		if vlen == 12 {
			return math.Float64frombits(order.Uint64(blk[4:])), true
		}
	case stream.TypeFloat:
		if vlen == 8 {
			return float64(math.Float32frombits(order.Uint32(blk[4:]))), true
		}
	}
	return 0, false
}

// finishPass3 adds the per-metric summaries and the counts.
func (c *checker) finishPass3() {
	for k, n := range c.limits {
		if n > 1 {
			f := &c.out[c.limitOut[k]]
			prev := f.lazy
			more := n - 1
			f.lazy = func() string {
				if more == 1 {
					return prev() + " (and in 1 more record)"
				}
				return fmt.Sprintf("%s (and in %d more records)", prev(), more)
			}
		}
	}
	if c.opts.Verbose {
		f := c.files[0]
		if len(c.vols) > 0 {
			f = c.vols[0]
		}
		c.add(f, -1, 3, Info, "processed %d result records, %d of them <mark> records", c.results, c.marks)
	}
}

// stamp prints a pass 3 time as pmlogcheck does: the clock time to the
// millisecond, with the date when the archive spans more than a day.
func (c *checker) stamp(t stream.Timestamp) string {
	tm := time.Unix(t.Sec, int64(t.Nsec)).In(c.loc)
	ms := tm.Format("15:04:05.000")
	if c.longSpan() {
		return tm.Format("Mon Jan _2 ") + ms + tm.Format(" 2006")
	}
	return ms
}

func (c *checker) longSpan() bool {
	start := c.firstT
	if c.golden != nil {
		start = c.golden.Start
	}
	if s := c.opts.Start; s != nil {
		start = *s
	}
	end := c.lastT
	if e := c.opts.End; e != nil {
		end = *e
	}
	return end.Sub(start) > 24*time.Hour
}
