package format

// The archive reader: from a name to the files of one archive, their
// labels checked against each other, and (in reader_records.go) the files
// turned into one stream of records.
//
// An archive is the set of files base.meta, base.index and base.N (N a
// volume number), each possibly compressed (compress.Suffixes). Open finds
// them by listing the directory, as libpcp does, so volumes need not be
// numbered without gaps.
//
// Designs rejected:
//   - Opening every volume at Open and keeping it open: a day of archives
//     can hold hundreds of volumes; the reader opens one at a time, and
//     Open only reads (and closes) each file's label.
//   - Treating a damaged or foreign .index as fatal, as libpcp does: the
//     index is a hint for seeking, and everything it says can be recovered
//     by scanning; a damaged one is reported and ignored.
//   - bufio.Reader for framing: a record must be contiguous to be decoded
//     in place, and records can exceed any fixed buffer; recReader grows its
//     buffer instead, bounded by the bytes the file really holds.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// Option configures Open and OpenDir.
type Option func(*readerOptions)

type readerOptions struct {
	warn func(error)
}

// WithWarn sets the function that receives non-fatal problems (a damaged
// index, a truncated last record, time going backwards...). By default
// they are discarded.
func WithWarn(f func(error)) Option {
	return func(o *readerOptions) { o.warn = f }
}

// rdVolume is one data volume file.
type rdVolume struct {
	num  int
	path string
	size int64 // decompressed size at Open
}

// Archive is an open PCP archive: the names of its files and the label
// they share. It holds no file open between calls; Records opens the files
// it reads and its Close releases them.
//
// Meta and Index cache what they load; an Archive may be used from several
// goroutines, and each Records iterator from one.
type Archive struct {
	base      string
	label     stream.Label  // from .meta
	volLabel  *stream.Label // the first volume's, when there is one
	metaPath  string
	metaSize  int64
	indexPath string // "" when there is no usable index
	indexSize int64
	vols      []rdVolume
	warn      func(error)

	metaMu   sync.Mutex
	meta     *Metadata
	metaErr  error
	warnMu   sync.Mutex
	warned   map[string]bool // messages warnf reported
	endOnce  sync.Once
	end      stream.Timestamp
	endOK    bool
	endErr   error
	indexMu  sync.Mutex
	index    []IndexEntry
	indexOK  bool // index loaded and consistent enough to seek with
	indexErr error
	indexRan bool
	statOnce sync.Once
	stat     os.FileInfo // of the .meta file, for SameAs
	spareMu  sync.Mutex
	spares   *spareFiles // volumes End decoded the tail of (reader_spare.go)
}

// Label returns the archive label, as found in the .meta file (Vol is -1).
func (a *Archive) Label() stream.Label { return a.label }

// LibpcpLabel returns the label as libpcp reports it (pmGetArchiveLabel):
// the first volume's, whose timezone and start may differ from the
// .meta's (nothing else may: Open refuses it); the .meta's without a
// volume. Vol is -1.
func (a *Archive) LibpcpLabel() stream.Label {
	if a.volLabel == nil {
		return a.label
	}
	l := *a.volLabel
	l.Vol = -1
	return l
}

// Version returns the archive format version, 2 or 3.
func (a *Archive) Version() int { return a.label.Version }

// Base returns the archive's base name: the path of its files without
// the .meta, .index or .N suffix.
func (a *Archive) Base() string { return a.base }

// Volumes returns the data volume numbers, in increasing order.
func (a *Archive) Volumes() []int {
	out := make([]int, len(a.vols))
	for i, v := range a.vols {
		out[i] = v.num
	}
	return out
}

// LabelsOnly reports whether every data volume holds its label and
// nothing after it: an archive that libpcp will not open ("Empty archive
// log file"), where one with bytes after a label that are not a sound
// record is damaged, and libpcp opens it ("Cannot locate end of
// archive", QA's badlen-2, badlen-3, badlen-11).
//
// An archive with no data volume at all is not one of those: libpcp
// refuses it with other words (dump.NoDataError says which).
func (a *Archive) LabelsOnly() bool {
	size := int64(LabelSizeV2)
	if a.Version() == 3 {
		size = LabelSizeV3
	}
	for _, v := range a.vols {
		if v.size != size {
			return false
		}
	}
	return true
}

// LabelOnlyFile reports whether the .meta or the .index holds its label
// and nothing after it: libpcp will not open such an archive either
// ("Empty archive log file", PM_ERR_NODATA), whatever its volumes hold.
// Our readers go on (an index with no entries is not needed, a .meta
// with no descriptor fails where a result needs one); the tools under
// PCP's names refuse it as PCP's do.
func (a *Archive) LabelOnlyFile() bool {
	size := int64(LabelSizeV2)
	if a.Version() == 3 {
		size = LabelSizeV3
	}
	return a.metaSize == size || a.indexPath != "" && a.indexSize == size
}

// Files returns the paths of the archive's files: the .meta, the .index
// (when present and usable) and the volumes in order.
func (a *Archive) Files() []string {
	out := []string{a.metaPath}
	if a.indexPath != "" {
		out = append(out, a.indexPath)
	}
	for _, v := range a.vols {
		out = append(out, v.path)
	}
	return out
}

// warnf reports a problem once: several reads of one archive (finding
// its end, then reading it) meet the same damage.
func (a *Archive) warnf(err error) {
	if a.warn == nil {
		return
	}
	msg := err.Error()
	a.warnMu.Lock()
	seen := a.warned[msg]
	if !seen {
		if a.warned == nil {
			a.warned = map[string]bool{}
		}
		a.warned[msg] = true
	}
	a.warnMu.Unlock()
	if !seen {
		a.warn(err)
	}
}

// Open opens the archive called name: a base name (/x/20041125), any of
// its files (20041125.meta, 20041125.0, 20041125.index.xz...), or a
// directory holding exactly one archive. It reads and checks the label of
// every file; the records are read by Records and Meta.
func Open(name string, opts ...Option) (*Archive, error) {
	var o readerOptions
	for _, f := range opts {
		f(&o)
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		bases, err := archivesIn(name)
		if err != nil {
			return nil, err
		}
		switch len(bases) {
		case 0:
			return nil, fmt.Errorf("%s: directory holds no PCP archive (no .meta file)", name)
		case 1:
			return openBase(bases[0], &o)
		}
		names := make([]string, len(bases))
		for i, b := range bases {
			names[i] = filepath.Base(b)
		}
		return nil, fmt.Errorf("%s: directory holds %d archives (%s): name one of them", name, len(bases), strings.Join(names, ", "))
	}
	base, err := resolveBase(name)
	if err != nil {
		return nil, err
	}
	return openBase(base, &o)
}

// OpenDir opens every archive in dir and returns them sorted by label
// start time (ties by name), for tools that treat a directory as one
// multi-archive source.
func OpenDir(dir string, opts ...Option) ([]*Archive, error) {
	var o readerOptions
	for _, f := range opts {
		f(&o)
	}
	bases, err := archivesIn(dir)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, fmt.Errorf("%s: directory holds no PCP archive (no .meta file)", dir)
	}
	out := make([]*Archive, 0, len(bases))
	for _, b := range bases {
		a, err := openBase(b, &o)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(x, y *Archive) int {
		if c := x.label.Start.Compare(y.label.Start); c != 0 {
			return c
		}
		return strings.Compare(x.base, y.base)
	})
	return out, nil
}

// archivesIn lists the base names of the archives in dir (one per .meta
// file, compressed or not), sorted.
func archivesIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []string
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		n, _ := compress.SplitSuffix(e.Name())
		if b, ok := strings.CutSuffix(n, ".meta"); ok && b != "" {
			p := filepath.Join(dir, b)
			if !slices.Contains(bases, p) {
				bases = append(bases, p)
			}
		}
	}
	slices.Sort(bases)
	return bases, nil
}

// hasMeta reports whether base.meta exists, plain or compressed.
func hasMeta(base string) bool {
	_, err := compress.Lookup(base + ".meta")
	return err == nil
}

// resolveBase turns a name into a base name. A name whose .meta exists is
// a base name even if it looks like a file name (base names such as
// 951127.23.01 end in digits). Otherwise the name must be a file (or the
// plain name of a compressed file) of an archive: a compression suffix and
// then a .meta, .index or .N suffix are stripped.
func resolveBase(name string) (string, error) {
	if name == "" {
		return "", errors.New("empty archive name")
	}
	if hasMeta(name) {
		return name, nil
	}
	if _, err := compress.Lookup(name); err != nil {
		return "", fmt.Errorf("%s: no PCP archive or archive file of that name: %w", name, err)
	}
	n, _ := compress.SplitSuffix(name)
	if i := strings.LastIndexByte(n, '.'); i > 0 {
		ext := n[i+1:]
		if ext == "meta" || ext == "index" || isDigits(ext) {
			if b := n[:i]; hasMeta(b) {
				return b, nil
			}
		}
	}
	if isFolio(name) {
		return "", notArchive(fmt.Sprintf("%s: an archive folio (as pmafm reads), not an archive: give it to --folio (pcpextract, pcpreduce, pcpsummary; pcpexport --dataset), or name the archives it lists", name))
	}
	return "", notArchive(fmt.Sprintf("%s: not a PCP archive file (no matching .meta file)", name))
}

// notArchive is a name that is a file but not an archive's: no archive
// of that name exists (errors.Is fs.ErrNotExist), which libpcp, looking
// for its .meta, says as "No such file or directory".
type notArchive string

func (e notArchive) Error() string { return string(e) }
func (e notArchive) Unwrap() error { return fs.ErrNotExist }

// isFolio reports whether the file name starts as an archive folio does
// (package folio reads them; it imports this one).
func isFolio(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [9]byte
	n, _ := io.ReadFull(f, b[:])
	return string(b[:n]) == "PCPFolio\n"
}

// rdCandidate is one file found for a role; plain files beat compressed
// ones, and among compressed ones the earlier suffix in compress.Suffixes
// wins, as in libpcp.
type rdCandidate struct {
	path string
	rank int
}

func suffixRank(suf string) int {
	if suf == "" {
		return 0
	}
	return 1 + slices.Index(compress.Suffixes, suf)
}

func openBase(base string, o *readerOptions) (*Archive, error) {
	a := &Archive{base: base, warn: o.warn}
	dir, file := filepath.Split(base)
	scan := dir
	if scan == "" {
		scan = "."
	}
	ents, err := filesOf(scan, file+".")
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", base, err)
	}
	var meta, index rdCandidate
	vols := map[int]rdCandidate{}
	choose := func(what string, cur *rdCandidate, c rdCandidate) {
		if cur.path == "" || c.rank < cur.rank {
			if cur.path != "" {
				a.warnf(fmt.Errorf("archive %s: %s exists as both %s and %s; reading %s", base, what, filepath.Base(cur.path), filepath.Base(c.path), filepath.Base(c.path)))
			}
			*cur = c
		} else {
			a.warnf(fmt.Errorf("archive %s: %s exists as both %s and %s; reading %s", base, what, filepath.Base(cur.path), filepath.Base(c.path), filepath.Base(cur.path)))
		}
	}
	for _, e := range ents {
		n, suf := compress.SplitSuffix(e)
		rest, ok := strings.CutPrefix(n, file+".")
		if !ok {
			continue
		}
		c := rdCandidate{path: dir + e, rank: suffixRank(suf)}
		switch {
		case rest == "meta":
			choose("the metadata file", &meta, c)
		case rest == "index":
			choose("the index", &index, c)
		case isDigits(rest):
			v, err := strconv.Atoi(rest)
			if err != nil || v > math.MaxInt32 {
				a.warnf(fmt.Errorf("%s: volume number out of range, file ignored", c.path))
				continue
			}
			cur := vols[v]
			choose("volume "+strconv.Itoa(v), &cur, c)
			vols[v] = cur
		}
	}
	if meta.path == "" {
		return nil, fmt.Errorf("archive %s: no .meta file", base)
	}
	a.metaPath = meta.path
	lab, size, err := readFileLabel(meta.path, -1)
	if err != nil {
		return nil, err
	}
	a.label, a.metaSize = lab, size
	if err := checkFeatures(&lab, meta.path); err != nil {
		return nil, err
	}

	nums := make([]int, 0, len(vols))
	for v := range vols {
		nums = append(nums, v)
	}
	slices.Sort(nums)
	for i, v := range nums {
		p := vols[v].path
		l, size, err := readFileLabel(p, int32(v))
		if err == nil && i == 0 {
			err = a.agree(&l, p, true)
		} else if err == nil {
			// libpcp reads a later volume that names another host
			if herr := a.agree(&l, p, false); herr != nil && l.Version == a.label.Version {
				a.warnf(herr)
			} else {
				err = herr
			}
		}
		// libpcp checks the first volume's label when it opens an
		// archive, and a later one's format and version when it reaches
		// it, skipping a volume it refuses: so does the reader
		// (openVolume), so that the other volumes can be read.
		if err != nil && (i == 0 || !errors.Is(err, ErrLabel)) {
			return nil, err
		}
		if i == 0 {
			a.volLabel = &l
		}
		a.vols = append(a.vols, rdVolume{num: v, path: p, size: size})
	}
	if len(a.vols) == 0 {
		a.warnf(labelError{fmt.Errorf("archive %s: no data volume (%s.0): the archive holds metadata only", base, file), ErrNoVolume})
	}

	if index.path != "" {
		l, size, err := readFileLabel(index.path, -2)
		if err == nil {
			err = a.agree(&l, index.path, true)
		}
		if err != nil {
			a.warnf(fmt.Errorf("index ignored: %w", err))
		} else {
			a.indexPath, a.indexSize = index.path, size
		}
	}
	return a, nil
}

// filesOf lists the names in dir that start with prefix and are not
// directories, sorted. A directory of thousands of archives is listed
// once for each archive opened: only the few names that match are
// sorted and looked at (os.ReadDir would sort them all).
func filesOf(dir, prefix string) ([]string, error) {
	names, err := listDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || st.IsDir() {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// The last directory listed, kept while the directory is unchanged, so
// that opening each of thousands of archives in one directory does not
// list it again each time (libpcp does, and so pmlogextract's opening
// grows as the square of the number of archives). A listing is kept only
// when the directory had not been changed for a while when it was taken:
// a change after it then moves the directory's modification time, even
// on a file system whose clock ticks coarsely (the rule git applies to
// "racily clean" files).
var dirCache struct {
	sync.Mutex
	dir   string
	st    os.FileInfo
	names []string
}

// ForgetDirs drops the directory listing kept for Open (see dirCache),
// for a caller that has opened every archive it will: a listing of a
// directory of thousands of archives is a few hundred KiB.
func ForgetDirs() {
	dirCache.Lock()
	dirCache.dir, dirCache.st, dirCache.names = "", nil, nil
	dirCache.Unlock()
}

// settled is how long before a listing a directory must have last been
// changed for the listing to be kept.
const settled = 2 * time.Second

// listDir returns the names in dir (unsorted).
func listDir(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	dirCache.Lock()
	if dirCache.dir == dir && sameDirState(dirCache.st, st) {
		names := dirCache.names
		dirCache.Unlock()
		return names, nil
	}
	dirCache.Unlock()
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	if time.Since(st.ModTime()) > settled {
		if st2, err := f.Stat(); err == nil && sameDirState(st, st2) {
			dirCache.Lock()
			dirCache.dir, dirCache.st, dirCache.names = dir, st, names
			dirCache.Unlock()
		}
	}
	return names, nil
}

// sameDirState reports whether two os.Stat of a directory show it
// unchanged: the same directory, modification time and size.
func sameDirState(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// agree checks that the label of another file of the archive matches the
// .meta label.
//
// libpcp refuses an archive whose .meta, first volume and .index labels
// differ in version, pmlogger PID or host (so does pmlogcheck); so does
// the reader, but for the .index, which it then ignores with a warning.
// The PID is compared when pid is set: libpcp does not compare a later
// volume's.
func (a *Archive) agree(l *stream.Label, path string, pid bool) error {
	var err error
	switch {
	case l.Version != a.label.Version:
		err = &FormatError{File: path, Offset: 4, Msg: fmt.Sprintf("label says archive version %d, %s says %d", l.Version, filepath.Base(a.metaPath), a.label.Version)}
	case pid && l.PID != a.label.PID:
		err = &FormatError{File: path, Offset: 8, Msg: fmt.Sprintf("label says pmlogger PID %d, %s says %d", l.PID, filepath.Base(a.metaPath), a.label.PID)}
	case l.Hostname != a.label.Hostname:
		err = &FormatError{File: path, Offset: 0, Msg: fmt.Sprintf("label names host %q, %s names %q", l.Hostname, filepath.Base(a.metaPath), a.label.Hostname)}
	default:
		return checkFeatures(l, path)
	}
	return labelError{err, ErrLabel}
}

func checkFeatures(l *stream.Label, path string) error {
	if l.Version == 3 && l.Features&^FeatureQA != 0 {
		return &FormatError{File: path, Offset: 28, Msg: fmt.Sprintf("label has unknown feature bits 0x%08x", l.Features&^FeatureQA)}
	}
	return nil
}

// rdFile is what the reader needs of an open file; compress.File
// provides it for plain and compressed files alike.
type rdFile = compress.File

// openFile opens an archive file, refusing anything that is not a regular
// file: a FIFO or a device named like a volume would never end.
func openFile(path string) (rdFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return compress.Open(path)
}

// readFileLabel reads and decodes the label of the file at path and checks
// its volume field.
func readFileLabel(path string, vol int32) (stream.Label, int64, error) {
	f, err := openFile(path)
	if err != nil {
		return stream.Label{}, 0, err
	}
	defer f.Close()
	l, err := readLabel(f, path, vol)
	return l, f.Size(), err
}

func readLabel(r io.Reader, path string, vol int32) (stream.Label, error) {
	var b [LabelSizeV3]byte
	n, err := io.ReadFull(r, b[:8])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return stream.Label{}, fmt.Errorf("%s: %w", path, err)
	}
	if n == 8 {
		// Read only as much as this version's label, so that r is left at
		// the first record.
		size := LabelSizeV2
		if b[7] == 3 {
			size = LabelSizeV3
		}
		m, err := io.ReadFull(r, b[8:size])
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return stream.Label{}, fmt.Errorf("%s: %w", path, err)
		}
		n += m
	}
	l, err := DecodeLabel(b[:n])
	if err != nil {
		if n < 8 {
			// libpcp reads a label's length and magic number (8
			// bytes) first, and calls a file too short for them
			// empty (PM_ERR_NODATA)
			return l, labelError{AtFile(err, path, 0), ErrEmptyFile}
		}
		return l, labelError{AtFile(err, path, 0), ErrLabel}
	}
	if l.Vol != vol {
		off := int64(20) // len, magic, pid, v2 timestamp
		if l.Version == 3 {
			off = 24
		}
		return l, labelError{&FormatError{File: path, Offset: off, Msg: fmt.Sprintf("label volume field is %d, expected %d for this file", l.Vol, vol)}, ErrLabel}
	}
	return l, nil
}

// ErrLabel marks an error in the label of one of an archive's files, for
// which libpcp refuses the archive ("Illegal label record at start of a
// PCP archive log file", PM_ERR_LABEL): a bad length, magic number,
// version or volume field, or labels of one archive that disagree.
// ErrEmptyFile marks a file too short to hold a label's first two words, which
// libpcp calls an empty file (PM_ERR_NODATA). ErrNoVolume marks the
// warning for an archive with no data volume at all, which libpcp will not
// open ("Missing PCP archive log file", PM_ERR_LOGFILE). Tools under PCP's names
// print PCP's words for them (errors.Is); the error itself says what is
// wrong, and where.
var (
	ErrLabel     = errors.New("illegal label record")
	ErrEmptyFile = errors.New("empty archive file")
	ErrNoVolume  = errors.New("no data volume")
)

// labelError is an error marked as ErrLabel, ErrEmptyFile or ErrNoVolume.
type labelError struct {
	error
	kind error
}

func (e labelError) Unwrap() []error { return []error{e.error, e.kind} }

// SameAs reports whether a and b are the same archive on disk: their .meta
// files are one file (the same path, a link, or another name of the same
// file). A shell glob such as `20261122.*` names each archive by its .0,
// .meta and .index, and one archive must never be read as three.
func (a *Archive) SameAs(b *Archive) bool {
	if a.metaPath == b.metaPath {
		return true
	}
	sa, sb := a.metaStat(), b.metaStat()
	if sa == nil || sb == nil {
		return false
	}
	return os.SameFile(sa, sb)
}

// metaStat returns the .meta file's os.Stat, taken once: a tool checks
// each of thousands of inputs against every one before it (nil when the
// file cannot be found).
func (a *Archive) metaStat() os.FileInfo {
	a.statOnce.Do(func() {
		if st, err := os.Stat(a.metaPath); err == nil {
			a.stat = st
		}
	})
	return a.stat
}
