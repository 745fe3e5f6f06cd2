package dump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// LogTrace writes libpcp's -Dlog trace of how a PCP 6.0.3 tool opens and
// reads an archive (pmdumplog -Dlog; PCP's QA test 438 reads it):
// __pmStat, __pmLogOpen's scan of the directory, __pmFopen of each file
// with its decompression, __pmLogChkLabel of each label (or
// __pmLogLoadLabel's complaint), __pmLogChangeVol, the backwards read
// that locates the archive's end, __pmLogSetTime's positioning with the
// temporal index, and one __pmLogRead line per record read.
//
// It does not watch the tool's own reading: it reads the files itself,
// with libpcp's positions, its length checks and its order, so that a
// damaged archive's trace stops where libpcp's stops, with its words. The
// tool tells it when libpcp would act: Open, End, SetTime, and Fetch for
// each record pmdumplog fetches. File descriptors are numbered as libpcp's
// come out of a fresh process (the lowest free from 3: the directory's
// while it is scanned, then .meta and .index in the order the scan meets
// them, then the data volume, then a volume peeked at).
//
// The same reading serves the tools under PCP's names where libpcp's
// reading parts from ours: LibpcpFindsEnd (its search for the end) and
// Records (the records its fetches return), silently.
//
// Not reproduced: the two words past its buffer that libpcp's paranoid
// check dumps with its complaint (uninitialised memory; zeros here),
// __pmFindPDUBuf failing for a huge length, I/O errors, and contexts of
// more than one archive, which pmdumplog does not open.
type LogTrace struct {
	w       io.Writer
	arg     string // the archive as named
	name    string // directory and base name, as libpcp keeps it
	meta    *ltFile
	index   *ltFile
	minvol  int
	maxvol  int
	version int
	lsize   int64 // the label record's size
	start   stream.Timestamp
	ti      []format.IndexEntry
	seen    map[int]bool
	fds     map[int]bool
	cur     *ltFile // the current data volume
	curvol  int
	loc     *time.Location // for the times of End and after
	origin  stream.Timestamp
	back    bool // the context's mode is backwards
	serial  bool
	acOff   int64
	acVol   int
	endT    stream.Timestamp // the end End found
	last    stream.Record    // the record the last read decoded
	err     error            // the damage a fetch failed on
	physend int64            // the last volume's size when its end was found (-1: not)
	dead    bool             // libpcp gave up: nothing more is traced
	eol     bool             // ... at the end of the archive: a new mode reads on
	b       []byte
	rb      []byte // logRead's line
	quiet   bool   // nothing is written: nothing formatted

	// OnDecode and OnRead, when set, see each record read from the
	// current volume (not a peek): OnDecode with the context's position
	// then, as libpcp decodes it, and OnRead once it is read (after
	// -Dlog's line): pmdumplog -Dpdu's trace of every record libpcp
	// reads, positioning included.
	OnDecode func(rec stream.Record, origin stream.Timestamp)
	OnRead   func(rec stream.Record)
}

type ltFile struct {
	f    compress.File
	fd   int
	pos  int64
	size int64
	// a window of the file, as stdio buffers it (libpcp reads through
	// stdio): reading record by record costs a copy, not a system call
	buf    []byte
	bufOff int64
	back   bool // reading backwards: fill the window before the position
}

const ltWindow = 256 << 10

// libpcp 6.0.3's compression suffixes (PCP's compress_ctl[]), in order:
// the program that decodes each, and whether libpcp decodes it itself.
var pcpCompress = []struct {
	suffix, prog string
	inline       bool
}{
	{".xz", "xz", true}, {".lzma", "xz", false}, {".bz2", "bzip2", false},
	{".bz", "bzip2", false}, {".gz", "gzip", false}, {".Z", "gzip", false},
	{".z", "gzip", false},
}

// NewLogTrace prepares the trace of the archive named name, written to w.
func NewLogTrace(name string, w io.Writer) *LogTrace {
	return &LogTrace{w: w, arg: name, minvol: -1, maxvol: -1, curvol: -1, physend: -1,
		seen: map[int]bool{}, fds: map[int]bool{}, loc: time.Local, quiet: w == io.Discard}
}

// SetZone sets the zone of the times traced from End on (those before
// are in the local zone, as libpcp prints them before pmdumplog sets the
// archive's with -z).
func (t *LogTrace) SetZone(loc *time.Location) {
	if t != nil && loc != nil {
		t.loc = loc
	}
}

func (t *LogTrace) printf(format string, args ...any) {
	t.b = fmt.Appendf(t.b[:0], format, args...)
	t.w.Write(t.b)
}

func (t *LogTrace) stamp(ts stream.Timestamp, loc *time.Location) string {
	return string(appendTraceTime(nil, ts, loc))
}

func (t *LogTrace) allocFD() int {
	fd := 3
	for t.fds[fd] {
		fd++
	}
	t.fds[fd] = true
	return fd
}

func (t *LogTrace) close(f *ltFile) {
	if f != nil && f.f != nil {
		f.f.Close()
		f.f = nil
		delete(t.fds, f.fd)
	}
}

// compressIndex is libpcp's index_compress: the compression a file name
// calls for, and the name of the file that holds it (-1: none).
func compressIndex(name string) (int, string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		for j, c := range pcpCompress {
			if name[i:] == c.suffix {
				return j, name
			}
		}
	}
	if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
		for j, c := range pcpCompress {
			if _, err := os.Stat(name + c.suffix); err == nil || !errors.Is(err, fs.ErrNotExist) {
				return j, name + c.suffix
			}
		}
	}
	return -1, name
}

func (t *LogTrace) decompressWords(fn, name string, ix int) {
	if ix < 0 {
		t.printf("%s(\"%s\"%s): no decompress\n", fn, name, fnMode(fn))
		return
	}
	c := pcpCompress[ix]
	fly := ""
	if c.inline {
		fly = " (on-the-fly)"
	}
	t.printf("%s(\"%s\"%s): decompress: %s%s\n", fn, name, fnMode(fn), c.prog, fly)
}

func fnMode(fn string) string {
	if fn == "__pmFopen" {
		return ", \"r\""
	}
	return ""
}

// fopen is __pmFopen(name, "r").
func (t *LogTrace) fopen(name string) *ltFile {
	ix, file := compressIndex(name)
	t.decompressWords("__pmFopen", name, ix)
	if ix >= 0 && !pcpCompress[ix].inline {
		t.printf("__pmLogOpen: uncompress using: %s -dc %s\n", pcpCompress[ix].prog, file)
	}
	if ix < 0 {
		// libpcp opens a name without a suffix as it is, even when
		// a compressed file of that name exists beside it.
		if st, err := os.Stat(file); err != nil || st.IsDir() {
			return nil
		}
	}
	f, err := compress.Open(file)
	if err != nil {
		return nil
	}
	return &ltFile{f: f, fd: t.allocFD(), size: f.Size()}
}

// read is fread: up to len(p) bytes from the file's position.
func (f *ltFile) read(p []byte) int {
	if f.pos >= f.size || f.pos < 0 {
		return 0
	}
	if rest := f.size - f.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	if len(p) > ltWindow/2 {
		n, _ := f.f.ReadAt(p, f.pos)
		f.pos += int64(n)
		return n
	}
	n := 0
	for n < len(p) {
		if f.pos >= f.bufOff && f.pos < f.bufOff+int64(len(f.buf)) {
			c := copy(p[n:], f.buf[f.pos-f.bufOff:])
			n += c
			f.pos += int64(c)
			continue
		}
		if !f.fill(int64(len(p) - n)) {
			break
		}
	}
	return n
}

// fill reads the window around the position, need bytes from it on at
// least (before it too, reading backwards).
func (f *ltFile) fill(need int64) bool {
	if cap(f.buf) < ltWindow {
		f.buf = make([]byte, ltWindow)
	}
	start := f.pos
	if f.back {
		start = max(f.pos+need-ltWindow, 0)
	}
	end := min(start+ltWindow, f.size)
	b := f.buf[:cap(f.buf)][:end-start]
	m, _ := f.f.ReadAt(b, start)
	f.buf, f.bufOff = b[:m], start
	return f.pos < start+int64(m)
}

// seek is fseek: a position before the start is refused.
func (f *ltFile) seek(off int64) {
	if off >= 0 {
		f.pos = off
	}
}

// Open traces pmNewContext's opening of the archive; false when libpcp
// fails to open it (the trace then stops).
func (t *LogTrace) Open() bool {
	if t == nil {
		return false
	}
	ix, _ := compressIndex(t.arg)
	t.decompressWords("__pmStat", t.arg, ix)
	if !t.findOpen() {
		t.dead = true
		return false
	}
	if !t.changeVol(t.minvol) {
		t.dead = true
		return false
	}
	lab := t.label(t.cur)
	if t.index != nil {
		v, l := t.chkLabel(t.index, -2)
		if v < 0 || v != t.version || l.pid != lab.pid || l.host != lab.host {
			t.dead = true
			return false
		}
	}
	v, l := t.chkLabel(t.meta, -1)
	if v < 0 || v != t.version {
		t.dead = true
		return false
	}
	t.loadIndex()
	if l.pid != lab.pid || l.host != lab.host {
		t.dead = true
		return false
	}
	t.acOff, t.acVol = t.cur.pos, t.curvol
	return true
}

// findOpen is __pmLogFindOpen: the directory scanned for the archive's
// files.
func (t *LogTrace) findOpen() bool {
	dir, base := cDirname(t.arg), path.Base(t.arg)
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return err == nil || !errors.Is(err, fs.ErrNotExist)
	}
	named := exists(t.arg)
	for _, c := range pcpCompress {
		named = named || exists(t.arg+c.suffix)
	}
	if b := logBaseName(base); named && b != "" {
		// the name of one of the archive's files
		base = b
	}
	t.name = dir + "/" + base
	d, err := os.Open(dir)
	if err != nil {
		t.printf("__pmLogOpen: cannot scan directory \"%s\": %s\n", dir, libpcpErrno(err))
		return false
	}
	dfd := t.allocFD()
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		b := logBaseName(n)
		if b == "" || b != base {
			continue
		}
		file := dir + "/" + n
		t.printf("__pmLogOpen: inspect file \"%s\"\n", file)
		switch suffix := logSuffix(n, base); suffix {
		case "index":
			if t.index = t.fopen(file); t.index == nil {
				return false
			}
		case "meta":
			if t.meta = t.fopen(file); t.meta == nil {
				return false
			}
		default:
			if v, err := strconv.ParseUint(suffix, 10, 32); err == nil {
				if t.minvol == -1 || int(v) < t.minvol {
					t.minvol = int(v)
				}
				if int(v) > t.maxvol {
					t.maxvol = int(v)
				}
			}
		}
	}
	delete(t.fds, dfd)
	if t.minvol == -1 || t.meta == nil {
		if t.minvol == -1 {
			t.printf("__pmLogOpen: Not found: data file \"%s.0\" (or similar)\n", base)
		}
		if t.meta == nil {
			t.printf("__pmLogOpen: Not found: metadata file \"%s.meta\"\n", base)
		}
		return false
	}
	return true
}

// cDirname is dirname(3).
func cDirname(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return "/"
	}
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	if d := strings.TrimRight(p[:i], "/"); d != "" {
		return d
	}
	return "/"
}

// logBaseName is __pmLogBaseName: name without its archive suffix
// (index, meta or a volume number, each optionally compressed), or ""
// when it is not the name of an archive file.
func logBaseName(name string) string {
	q := strings.LastIndexByte(name, '.')
	if q < 0 {
		return ""
	}
	for _, c := range pcpCompress {
		if name[q:] == c.suffix {
			q2 := strings.LastIndexByte(name[:q], '.')
			if q2 < 0 {
				return ""
			}
			name, q = name[:q], q2
			break
		}
	}
	switch s := name[q+1:]; {
	case s == "index" || s == "meta":
		return name[:q]
	case s != "":
		// strtol's digits: an optional sign and space, then digits
		// to the end
		d := strings.TrimLeft(s, " \t\n\v\f\r")
		d = strings.TrimPrefix(strings.TrimPrefix(d, "+"), "-")
		if d != "" && strings.Trim(d, "0123456789") == "" {
			return name[:q]
		}
	}
	return ""
}

// logSuffix is what follows base and its dot in n, less a compression
// suffix.
func logSuffix(n, base string) string {
	s := strings.TrimPrefix(n, base+".")
	for _, c := range pcpCompress {
		if strings.HasSuffix(s, c.suffix) && len(s) > len(c.suffix) {
			return s[:len(s)-len(c.suffix)]
		}
	}
	return s
}

func libpcpErrno(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// changeVol is __pmLogChangeVol.
func (t *LogTrace) changeVol(vol int) bool {
	if t.curvol == vol && t.cur != nil {
		return true
	}
	t.close(t.cur)
	t.cur = nil
	f := t.fopen(fmt.Sprintf("%s.%d", t.name, vol))
	if f == nil {
		t.curvol = -1
		return false
	}
	t.cur = f
	v, _ := t.chkLabel(f, vol)
	if v < 0 {
		return false
	}
	t.curvol = vol
	t.printf("__pmLogChangeVol: change to volume %d\n", vol)
	return true
}

type ltLabel struct {
	magic   uint32
	version int
	pid     int32
	start   stream.Timestamp
	vol     int32
	feat    uint32
	host    string
	tz      string
	zi      string
}

// label is the label a data volume was checked with (the first).
func (t *LogTrace) label(f *ltFile) ltLabel {
	l, _ := t.loadLabel(f, false)
	return l
}

// loadLabel is __pmLogLoadLabel; say false keeps it quiet.
func (t *LogTrace) loadLabel(f *ltFile, say bool) (ltLabel, bool) {
	var l ltLabel
	complain := func(format string, args ...any) (ltLabel, bool) {
		if say {
			t.printf("__pmLogLoadLabel: "+format+"\n", args...)
		}
		return l, false
	}
	f.seek(0)
	var peek [8]byte
	if n := f.read(peek[:]); n != 8 {
		return complain("file is empty")
	}
	length := binary.BigEndian.Uint32(peek[:])
	l.magic = binary.BigEndian.Uint32(peek[4:])
	l.version = int(l.magic & 0xff)
	var size int
	switch l.version {
	case 3:
		size = format.LabelSizeV3
	case 2:
		size = format.LabelSizeV2
	default:
		return complain("label version %d not supported", l.version)
	}
	if int64(length) != int64(size) {
		return complain("bad header len=%d (expected %d)", length, size)
	}
	body := make([]byte, size-12)
	if n := f.read(body); n != len(body) {
		return complain("bad label read len=%d: expected %d", n, len(body))
	}
	trail := peek
	n := f.read(trail[:4])
	tl := int32(binary.BigEndian.Uint32(trail[:4]))
	if n != 4 || uint32(tl) != length {
		return complain("trailer read -> %d (expect 4) or bad trailer len=%d (expected %d)", n, tl, length)
	}
	u32 := func(off int) uint32 { return binary.BigEndian.Uint32(body[off:]) }
	str := func(off, n int) string {
		s := body[off : off+n-1]
		if i := strings.IndexByte(string(s), 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	l.pid = int32(u32(0))
	l.start = format.DecodeTimestamp(body[4:], l.version)
	if l.version == 3 {
		l.vol = int32(u32(16))
		l.feat = u32(20)
		l.host, l.tz, l.zi = str(28, 256), str(284, 256), str(540, 256)
	} else {
		l.vol = int32(u32(12))
		l.host, l.tz = str(16, 64), str(80, 40)
	}
	return l, true
}

// chkLabel is __pmLogChkLabel: the label's version, or -1 when it fails.
func (t *LogTrace) chkLabel(f *ltFile, vol int) (int, ltLabel) {
	if vol >= 0 && t.seen[vol] {
		f.seek(t.lsize)
		return 0, ltLabel{}
	}
	l, ok := t.loadLabel(f, true)
	if !ok {
		return -1, l
	}
	out := fmt.Appendf(nil, "__pmLogChkLabel: fd=%d vol=%d", f.fd, vol)
	defer func() { t.w.Write(append(out, '\n')) }()
	if l.magic&0xffffff00 != format.MagicBase {
		out = fmt.Appendf(out, " label magic 0x%x not 0x%x as expected", l.magic&0xffffff00, format.MagicBase)
		return -1, l
	}
	if int(l.vol) != vol {
		out = fmt.Appendf(out, " label volume %d not %d as expected", l.vol, vol)
		return -1, l
	}
	out = fmt.Appendf(out, " [magic=0x%08x version=%d vol=%d pid=%d start=", l.magic, l.version, l.vol, l.pid)
	out = appendTraceTime(out, l.start, time.Local)
	if l.feat != 0 {
		out = fmt.Appendf(out, " features=0x%x \"%s\"", l.feat, featuresStr(l.feat))
	}
	out = fmt.Appendf(out, " host=%s tz=%s", l.host, l.tz)
	if l.version == 3 {
		out = fmt.Appendf(out, " zoneinfo=%s", l.zi)
	}
	out = append(out, ']')
	if t.version == 0 {
		t.version, t.start = l.version, l.start
		t.lsize = int64(format.LabelSize(l.version))
	}
	if f.size == int64(format.LabelSize(l.version)) {
		out = append(out, " file is empty"...)
		return -1, l
	}
	if vol >= 0 {
		t.seen[vol] = true
	}
	return l.version, l
}

// featuresStr is __pmLogFeaturesStr.
func featuresStr(f uint32) string {
	var s []string
	for pos := 31; pos >= 0; pos-- {
		if f&(1<<pos) == 0 {
			continue
		}
		if pos == 31 {
			s = append(s, "QA")
		} else {
			s = append(s, fmt.Sprintf("bit_%02d", pos))
		}
	}
	return strings.Join(s, " ")
}

// loadIndex is __pmLogLoadIndex: the whole entries after the label.
func (t *LogTrace) loadIndex() {
	if t.index == nil {
		return
	}
	n := format.IndexEntrySize(t.version)
	buf := make([]byte, n)
	t.index.seek(t.lsize)
	for t.index.read(buf) == n {
		t.ti = append(t.ti, format.DecodeIndexEntry(buf, t.version))
	}
}

// The outcome of a read.
const (
	readOK = iota
	readEOL
	readBad
)

// logRead is __pmLogRead_ctx: one record read forwards or backwards from
// the current volume's position (or from peek's), and its time.
func (t *LogTrace) logRead(back bool, peek *ltFile) (stream.Timestamp, int) {
	f := peek
	if f == nil {
		f = t.cur
	}
	if f == nil {
		return stream.Timestamp{}, readBad
	}
	offset := f.pos
	f.back = back
	var out []byte
	if !t.quiet {
		out = fmt.Appendf(t.rb[:0], "__pmLogRead: fd=%d", f.fd)
		if peek != nil {
			out = append(out, " (peek)"...)
		}
		mode := "forw"
		if back {
			mode = "back"
		}
		out = fmt.Appendf(out, " mode=%s vol=%d posn=%d ", mode, t.curvol, offset)
	}
	flush := func() {
		if len(out) > 0 {
			t.w.Write(out)
		}
		t.rb, out = out[:0], out[:0]
	}
	defer flush()
	if back {
		for {
			if offset <= t.lsize {
				out = append(out, "BEFORE start\n"...)
				if peek != nil {
					return stream.Timestamp{}, readEOL
				}
				vol := t.curvol - 1
				for ; vol >= t.minvol; vol-- {
					flush()
					if t.changeVol(vol) {
						f = t.cur
						f.pos = f.size
						offset = f.pos
						out = fmt.Appendf(out, "vol=%d posn=%d ", t.curvol, offset)
						break
					}
				}
				if vol >= t.minvol {
					continue
				}
				return stream.Timestamp{}, readEOL
			}
			f.seek(f.pos - 4)
			break
		}
	}
	var w [4]byte
again:
	if n := f.read(w[:]); n != 4 {
		out = append(out, "AFTER end\n"...)
		f.seek(offset)
		if peek != nil {
			return stream.Timestamp{}, readEOL
		}
		for vol := t.curvol + 1; vol <= t.maxvol; vol++ {
			flush()
			if t.changeVol(vol) {
				f = t.cur
				goto again
			}
		}
		return stream.Timestamp{}, readEOL
	}
	head := int32(binary.BigEndian.Uint32(w[:]))
	rlen := int64(head) - 8
	if rlen < 0 || back && rlen > offset {
		out = fmt.Appendf(out, "\nError: truncated log? rlen=%d (offset %d)\n", int32(rlen), int32(offset))
		return stream.Timestamp{}, readBad
	}
	if back {
		f.seek(f.pos - (4 + rlen))
	}
	// never more than the file holds: a hostile length must not
	// allocate gigabytes (libpcp's fread comes up short the same way)
	have := max(min(rlen, f.size-f.pos), 0)
	rec := make([]byte, 4+have+4)
	binary.BigEndian.PutUint32(rec, uint32(head))
	if n := f.read(rec[4 : 4+have]); int64(n) != rlen {
		out = fmt.Appendf(out, "\nError: data fread got %d expected %d\n", n, rlen)
		f.seek(offset)
		return stream.Timestamp{}, readBad
	}
	if back {
		f.seek(f.pos - (rlen + 4))
	}
	if n := f.read(w[:]); n != 4 {
		out = fmt.Appendf(out, "\nError: trailer fread got %d expected 4\n", n)
		f.seek(offset)
		return stream.Timestamp{}, readBad
	}
	trail := int32(binary.BigEndian.Uint32(w[:]))
	if trail != head {
		out = fmt.Appendf(out, "\nError: record length mismatch: header (%d) != trailer (%d)\n", head, trail)
		return stream.Timestamp{}, readBad
	}
	if peek != nil {
		// pmGetArchiveEnd reads with libpcp's paranoid check
		var bad bool
		if out, bad = paranoidCheck(out, head, t.version, rec[4:4+rlen]); bad {
			return stream.Timestamp{}, readBad
		}
	}
	if back {
		f.seek(f.pos - 4)
	}
	binary.BigEndian.PutUint32(rec[4+rlen:], uint32(trail))
	var res stream.Result
	mark, err := format.DecodeData(rec, t.version, &res)
	if err == nil && !mark {
		err = res.Validate()
	}
	if err != nil {
		out = append(out, "__pmLogRead: __pmDecodeResult failed: IPC protocol failure\n@unknown time"...)
		out = fmt.Appendf(out, " len=header+%d+trailer\n", rlen)
		return stream.Timestamp{}, readBad
	}
	if mark {
		t.last = &stream.Mark{T: res.T}
	} else {
		t.last = &res
	}
	pdu := t.OnDecode != nil && peek == nil
	if pdu {
		// libpcp's -Dpdu dump of the result comes from the decoding,
		// before the record's time; its words after
		flush()
		t.OnDecode(t.last, t.origin)
	}
	if !t.quiet {
		out = append(out, '@')
		out = appendTraceTime(out, res.T, t.loc)
		out = fmt.Appendf(out, " (t=%.6f) len=header+%d+trailer\n", tsSub(res.T, t.start), rlen)
	}
	if pdu {
		flush()
		t.OnRead(t.last)
	}
	return res.T, readOK
}

// paranoidCheck is libpcp's check of a record read where it looks for an
// archive's end: the value sets and the blocks they point at must fit the
// record's length (length, from its length word). data is what libpcp
// reads into its PDU buffer after its three header words (the record
// less its length words). It appends libpcp's complaint to out and
// reports whether the record is bad. The C arithmetic is kept: int
// sizes that wrap, compared as size_t.
func paranoidCheck(out []byte, length int32, version int, data []byte) ([]byte, bool) {
	// libpcp's buffer: the PDU header in the host's order, the record,
	// and the trailer's word, which libpcp does not fill (zero here)
	pb := make([]byte, 12, 12+len(data)+4)
	binary.LittleEndian.PutUint32(pb, uint32(12+len(data)))
	binary.LittleEndian.PutUint32(pb[4:], 0x7001) // PDU_RESULT
	pb = append(append(pb, data...), 0, 0, 0, 0)
	word := func(i int64) uint32 { // pb[i], network order
		if i < 0 || 4*i+4 > int64(len(pb)) {
			return 0
		}
		return binary.BigEndian.Uint32(pb[4*i:])
	}
	hdrsz, first := int64(20), int64(6) // bytes of head and tail; data's first word
	numpmid := int32(word(5))
	if version >= 3 {
		hdrsz, first = 24, 7
		numpmid = int32(word(6))
	}
	bad := func(format string, args ...any) ([]byte, bool) {
		out = fmt.Appendf(out, "\nparanoidCheck: "+format+"\n", args...)
		nch := int(length) / 4
		out = append(out, "000: "...)
		for j := 0; j < nch; j++ {
			if j > 0 && j%8 == 0 {
				out = fmt.Appendf(out, "\n%03d: ", j)
			}
			out = fmt.Appendf(out, "%8x ", binary.LittleEndian.Uint32(pbWord(pb, 3+j)))
		}
		return append(out, '\n'), true
	}
	ulen := uint64(int64(length)) // len as size_t
	if ulen < uint64(hdrsz) {
		return bad("len=%d, min len=%d", length, hdrsz)
	}
	if numpmid < 1 {
		if int64(length) != hdrsz {
			return bad("numpmid=%d len=%d, expected len=%d", numpmid, length, hdrsz)
		}
	}
	var vsize, vbsize int32
	for i := int32(0); i < numpmid; i++ {
		vl := first + int64(uint64(int64(vsize))/4)
		vsize += 8
		if ulen < uint64(hdrsz)+uint64(int64(vsize))+uint64(int64(vbsize)) {
			return bad("vset[%d] len=%d, need len>=%d (%d+%d+%d)", i, length, int32(hdrsz)+vsize+vbsize, hdrsz, vsize, vbsize)
		}
		numval := int32(word(vl + 1))
		if numval <= 0 {
			continue
		}
		valfmt := int32(word(vl + 2))
		if valfmt != stream.ValInsitu && valfmt != stream.ValDptr && valfmt != stream.ValSptr {
			return bad("vset[%d] bad valfmt=%d", i, valfmt)
		}
		vsize += int32(4 + uint64(int64(numval))*8)
		if valfmt == stream.ValInsitu {
			continue
		}
		for j := int64(0); j < int64(numval); j++ {
			if 4*(vl+3+2*j+2) > int64(len(pb)) {
				// libpcp reads on past its buffer here (undefined);
				// stop, so that a hostile count cannot spin
				break
			}
			index := int32(word(vl + 3 + 2*j + 1))
			if index < 0 || uint64(int64(index))*4 > ulen {
				return bad("vset[%d] val[%d], bad pval index=%d not in range 0..%d", i, j, index, length/4)
			}
			vlen := int32(word(int64(index)) & 0xffffff)
			if vlen < 4 {
				return bad("vset[%d] val[%d], bad vlen=%d", i, j, vlen)
			}
			vbsize += (vlen + 3) &^ 3
		}
	}
	return out, false
}

// pbWord is the four bytes of word i of pb, zero past its end.
func pbWord(pb []byte, i int) []byte {
	if 4*i+4 > len(pb) {
		return make([]byte, 4)
	}
	return pb[4*i : 4*i+4]
}

func tsSub(a, b stream.Timestamp) float64 {
	return float64(a.Sec-b.Sec) + float64(a.Nsec-b.Nsec)/1e9
}

// logPeek is _logpeek: a volume opened to look at, its label checked.
func (t *LogTrace) logPeek(vol int) *ltFile {
	f := t.fopen(fmt.Sprintf("%s.%d", t.name, vol))
	if f == nil {
		return nil
	}
	if v, _ := t.chkLabel(f, vol); v < 0 {
		t.close(f)
		return nil
	}
	return f
}

// End traces __pmGetArchiveEnd: the last record, read backwards from the
// end of the last volume that has one. It reports whether libpcp finds
// the end.
func (t *LogTrace) End() bool {
	if t == nil || t.dead {
		return false
	}
	var save int64
	for vol := t.maxvol; vol >= t.minvol; vol-- {
		var f *ltFile
		if t.curvol == vol {
			f, save = t.cur, t.cur.pos
		} else if f = t.logPeek(vol); f == nil {
			continue
		}
		if vol == t.maxvol && f.size == t.physend {
			// found before, and unchanged: libpcp's cached answer
			if f != t.cur {
				t.close(f)
			}
			return true
		}
		found, stop := t.endOf(f, vol)
		if found && vol == t.maxvol {
			t.physend = f.size
		}
		if f == t.cur {
			f.seek(save)
		} else {
			t.close(f)
		}
		if found || stop {
			return found
		}
	}
	return false
}

// EndTime is the time of the archive's last record as End found it (ok
// false when it did not).
func (t *LogTrace) EndTime() (stream.Timestamp, bool) {
	if t == nil || t.physend < 0 {
		return stream.Timestamp{}, false
	}
	return t.endT, true
}

// LibpcpFindsEnd reports whether libpcp 6.0.3 locates the end of the
// archive at base (its pmGetArchiveEnd succeeds), reading the files as
// LogTrace does, silently. An archive libpcp would not open at all
// counts as found: the tools say that instead.
func LibpcpFindsEnd(base string) bool {
	t := NewLogTrace(base, io.Discard)
	defer t.Close()
	if !t.Open() {
		return true
	}
	return t.End()
}

// endOf is one volume's turn in End: whether its last record was found,
// and whether End stops there anyway.
func (t *LogTrace) endOf(f *ltFile, vol int) (found, stop bool) {
	physend := f.size
	if physend <= t.lsize {
		return false, false
	}
	f.seek(physend)
	if ts, r := t.logRead(true, f); r == readOK {
		t.endT = ts
		return true, true
	}
	logend, i := t.lsize, len(t.ti)-1
	for ; i >= 0; i-- {
		if int(t.ti[i].Vol) == vol && t.ti[i].DataOff <= physend {
			logend = t.ti[i].DataOff
			break
		}
	}
	if i < 0 {
		return false, false
	}
	f.seek(logend)
	if logend > t.lsize {
		if _, r := t.logRead(true, f); r != readOK {
			t.printf("pmGetArchiveEnd: Error reading record ending at posn=%d ti[%d]@%s\n", logend, i, t.stamp(t.ti[i].T, t.loc))
			return false, true
		}
	}
	var w [4]byte
	for {
		offset := f.pos
		if f.read(w[:]) != 4 {
			break
		}
		if offset+int64(int32(binary.BigEndian.Uint32(w[:]))) > physend {
			break
		}
		f.seek(offset)
		ts, r := t.logRead(false, f)
		if r != readOK {
			break
		}
		found, t.endT = true, ts
	}
	return found, false
}

// SetTime traces pmSetMode's __pmLogSetTime: forwards (or backwards,
// with back) from origin, delta 0.
func (t *LogTrace) SetTime(origin stream.Timestamp, back bool) {
	if t != nil && t.eol {
		// (pmlogsummary -B sets the mode again after its first pass)
		t.dead, t.eol = false, false
	}
	if t == nil || t.dead {
		return
	}
	t.origin, t.back = origin, back
	if !t.setTime() {
		t.printf("pmSetMode: __pmLogSetTime failed: Missing PCP archive log file\n")
	}
}

func (t *LogTrace) volSkip(back bool, j int) int {
	vol := int(t.ti[j].Vol)
	for t.minvol <= vol && vol <= t.maxvol {
		if t.changeVol(vol) {
			return j
		}
		t.printf("VolSkip: Skip missing vol %d\n", vol)
		if !back {
			for j++; j < len(t.ti) && int(t.ti[j].Vol) == vol; j++ {
			}
			if j == len(t.ti) {
				return -1
			}
		} else {
			for j--; j >= 0 && int(t.ti[j].Vol) == vol; j-- {
			}
			if j < 0 {
				return -1
			}
		}
		vol = int(t.ti[j].Vol)
	}
	return -1
}

// setTime is __pmLogSetTime: false when it fails.
func (t *LogTrace) setTime() bool {
	t.printf("__pmLogSetTime(0) %s delta=0.000000000", t.stamp(t.origin, t.loc))
	numti := len(t.ti)
	if numti > 0 {
		j, match, toobig := -1, false, false
		size := int64(-1)
		i := 0
		for ; i < numti; i++ {
			tip := t.ti[i]
			if int(tip.Vol) < t.minvol {
				continue
			}
			if int(tip.Vol) == t.maxvol {
				if size < 0 {
					size = 0
					if t.seen[t.maxvol] {
						if t.cur != nil {
							size = t.cur.size
						}
					} else if f := t.logPeek(t.maxvol); f != nil {
						size = f.size
						t.close(f)
					}
				}
				if tip.DataOff > size {
					j, toobig = i, true
					break
				}
			}
			hi := tsSub(tip.T, t.origin)
			if hi > 0 {
				j = i
				break
			} else if hi == 0 {
				j, match = i, true
				break
			}
		}
		if i == numti {
			j = numti
		}
		t.serial = true
		// PM_MODE_FORW and PM_MODE_BACK, as libpcp numbers them
		modeOf := func(back bool) int {
			if back {
				return 3
			}
			return 2
		}
		// land is one of the landings: the volume of entry j made
		// current (VolSkip's way: back or forwards), its data offset
		// sought, serial access dropped when drop says, and the words
		// (say, then the entry's number when numbered, and its time)
		land := func(n int, back bool, j int, drop bool, say string, numbered bool) bool {
			try := j
			if j = t.volSkip(back, j); j < 0 {
				t.printf("%s: VolSkip mode=%d vol=%d failed #%d\n", "__pmLogSetTime", modeOf(back), try, n)
				return false
			}
			t.cur.seek(t.ti[j].DataOff)
			if drop {
				t.serial = false
			}
			if numbered {
				t.printf(" %s[%d]@%s", say, j, t.stamp(t.ti[j].T, t.loc))
			} else {
				t.printf(" %s@%s", say, t.stamp(t.ti[j].T, t.loc))
			}
			return true
		}
		var ok bool
		switch {
		case match:
			ok = land(1, t.back, j, t.back, "at ti", true)
		case j < 1:
			ok = land(2, false, 0, false, "before start ti", false)
		case j == numti:
			ok = land(3, true, numti-1, t.back, "after end ti", false)
		default:
			hi := tsSub(t.ti[j].T, t.origin)
			lo := tsSub(t.origin, t.ti[j-1].T)
			if hi <= lo && !toobig {
				ok = land(4, t.back, j, !t.back, "before ti", true)
			} else {
				ok = land(5, t.back, j-1, t.back, "after ti", true)
			}
			if !ok {
				return false
			}
			if t.serial && !t.back {
				t.printf(" back up ...\n")
				t.logRead(true, nil)
				t.printf("...")
			}
		}
		if !ok {
			return false
		}
	} else {
		if !t.back {
			j := t.minvol
			for ; j <= t.maxvol; j++ {
				if t.changeVol(j) {
					break
				}
			}
			if j > t.maxvol {
				t.printf(" index not useful, no volume between %d...%d\n", t.minvol, t.maxvol)
				t.cur, t.curvol = nil, -1
				return false
			}
			t.cur.seek(t.lsize)
		} else {
			j := t.maxvol
			for ; j >= t.minvol; j-- {
				if t.changeVol(j) {
					break
				}
			}
			if j < t.minvol {
				t.printf(" index not useful, no volume between %d...%d\n", t.maxvol, t.minvol)
				t.cur, t.curvol = nil, -1
				return false
			}
			t.cur.seek(t.cur.size)
		}
		t.printf(" index not useful\n")
	}
	serial := 0
	if t.serial {
		serial = 1
	}
	var pos int64
	if t.cur != nil {
		pos = t.cur.pos
	}
	t.printf(" vol=%d posn=%d serial=%d\n", t.curvol, pos, serial)
	t.acOff, t.acVol = pos, t.curvol
	return true
}

// Fetch traces one pmFetchArchive (__pmLogFetch with no metrics): the
// records read up to the next at or past the context's time, which it
// returns; false when libpcp's fetch fails (the end, or damage).
func (t *LogTrace) Fetch() bool {
	if t == nil || t.dead {
		return false
	}
	if !t.fetch() {
		// pmdumplog stops at the first fetch that fails
		t.dead, t.eol = true, t.err == nil
		return false
	}
	return true
}

func (t *LogTrace) fetch() bool {
	if !t.changeVol(t.acVol) {
		return false
	}
	if t.cur == nil {
		return false
	}
	t.cur.seek(t.acOff)
	nskip := 0
	for {
		if !t.serial {
			if !t.setTime() || t.cur == nil {
				return false
			}
			t.acOff, t.acVol = t.cur.pos, t.curvol
			nskip = 0
			var last stream.Timestamp
			known := false
			for {
				ts, r := t.logRead(!t.back, nil)
				if r != readOK {
					break
				}
				nskip++
				last, known = ts, true
				d := tsSub(ts, t.origin)
				if !t.back && d < 0 || t.back && d > 0 || d == 0 {
					break
				}
				t.acOff, t.acVol = t.cur.pos, t.curvol
				known = false
			}
			t.serial = true
			if nskip > 0 {
				when := "unknown time"
				if known {
					when = t.stamp(last, t.loc)
				}
				t.printf("__pmLogFetch: ctx=0 skip reverse %d to %s, found=0\n", nskip, when)
			}
			nskip = 0
		}
		ts, r := t.logRead(t.back, nil)
		if r != readOK {
			if r == readBad {
				t.failAt()
			}
			if t.cur != nil {
				t.acOff, t.acVol = t.cur.pos, t.curvol
			}
			return false
		}
		d := tsSub(ts, t.origin)
		if !t.back && d < 0 || t.back && d > 0 {
			nskip++
			continue
		}
		if nskip > 0 {
			t.printf("__pmLogFetch: ctx=0 skip %d to %s\n", nskip, t.stamp(ts, t.loc))
		}
		t.origin = ts
		t.acOff, t.acVol = t.cur.pos, t.curvol
		return true
	}
}

// quietly reports whether the trace writes nothing (it only reads as
// libpcp would, for LibpcpFindsEnd and Records).
func (t *LogTrace) quietly() bool { return t == nil || t.quiet }

// failAt notes the damage a fetch failed on, as an error in our terms:
// the volume and the offset libpcp read from.
func (t *LogTrace) failAt() {
	if t.err == nil {
		var off int64
		if t.cur != nil {
			off = t.cur.pos
		}
		t.err = &format.FormatError{File: fmt.Sprintf("%s.%d", t.name, t.curvol), Offset: off,
			Msg: "libpcp cannot read the record here (" + ErrStrLogRec + ")"}
	}
}

// Records is the records libpcp's fetches return, one Fetch per Next:
// a dump that reads through it shows what pmdumplog shows, where libpcp
// positions itself by a damaged temporal index or reads damage our reader
// reads past. Its Err is a *format.FormatError for damage libpcp's fetch
// fails on, nil at the end. Only results and marks come out.
func (t *LogTrace) Records() stream.CloserIterator { return &libpcpRecords{t: t} }

type libpcpRecords struct {
	t   *LogTrace
	rec stream.Record
}

func (r *libpcpRecords) Next() bool {
	r.rec = nil
	if !r.t.Fetch() {
		return false
	}
	r.rec = r.t.last
	return true
}

func (r *libpcpRecords) At() stream.Record { return r.rec }
func (r *libpcpRecords) Err() error        { return r.t.err }
func (r *libpcpRecords) Close() error      { return nil }

// Stat traces pmdumplog's __pmStat of one of the archive's files (by
// suffix: "meta", "0", ...), as its temporal index view makes.
func (t *LogTrace) Stat(suffix string) {
	if t == nil || t.dead {
		return
	}
	name := t.name + "." + suffix
	ix, _ := compressIndex(name)
	t.decompressWords("__pmStat", name, ix)
}

// Drain traces the fetches that follow until one fails: pmdumplog's loop
// after the last record it printed.
func (t *LogTrace) Drain() {
	for t.Fetch() {
	}
}

// Close releases the files the trace holds.
func (t *LogTrace) Close() {
	if t == nil {
		return
	}
	t.close(t.cur)
	t.close(t.meta)
	t.close(t.index)
}
