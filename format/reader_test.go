package format

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pcptools/pcptools/format/compress"
	"github.com/pcptools/pcptools/stream"
)

// rdBases returns the base names of the archives in dir: one per .meta
// file, plain or compressed.
func rdBases(t testing.TB, dir string) []string {
	t.Helper()
	bases, err := archivesIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	return bases
}

// rdCount is what a full read of an archive through Records gives.
type rdCount struct {
	Results, Marks                  int
	Descs, InDoms, LabelSets, Texts int
}

// rdReadAll iterates every record of a, checking the stream's invariants:
// one label first, time never going backwards (unless backwardsOK), and
// metadata in .meta order (compared with Meta when it loads).
func rdReadAll(a *Archive, backwardsOK bool, opts ...RecordsOption) (rdCount, error) {
	var c rdCount
	it := a.Records(opts...)
	defer it.Close()
	var last stream.Timestamp
	var metaSeq []stream.Record
	n := 0
	for it.Next() {
		r := it.At()
		// The first record is the archive's label; later labels mark the
		// start of each volume after the first.
		if l, ok := r.(*stream.Label); n == 0 && !ok || ok && n > 0 && l.Vol <= 0 {
			return c, fmt.Errorf("record %d is a %s", n, r.Kind())
		}
		if n > 0 && r.Time().Before(last) && !backwardsOK {
			return c, fmt.Errorf("record %d (%s) at %s goes back from %s", n, r.Kind(), r.Time(), last)
		}
		last = r.Time()
		n++
		switch r := r.(type) {
		case *stream.Result:
			c.Results++
		case *stream.Mark:
			c.Marks++
		case *stream.Desc:
			c.Descs++
			metaSeq = append(metaSeq, r)
		case *stream.InDom:
			c.InDoms++
			metaSeq = append(metaSeq, r)
		case *stream.LabelSet:
			c.LabelSets++
			metaSeq = append(metaSeq, r)
		case *stream.Text:
			c.Texts++
			metaSeq = append(metaSeq, r)
		}
	}
	if err := it.Err(); err != nil {
		return c, err
	}
	if err := it.Close(); err != nil {
		return c, err
	}
	// The metadata records of the stream are those of Meta, in order.
	md, err := a.Meta()
	if err != nil {
		return c, fmt.Errorf("Meta: %w", err)
	}
	if c.Descs != len(md.Descs) || c.InDoms != len(md.InDoms) || c.LabelSets != len(md.LabelSets) || c.Texts != len(md.Texts) {
		return c, fmt.Errorf("stream has %d/%d/%d/%d desc/indom/labelset/text records, Meta %d/%d/%d/%d",
			c.Descs, c.InDoms, c.LabelSets, c.Texts, len(md.Descs), len(md.InDoms), len(md.LabelSets), len(md.Texts))
	}
	var di, ii, li, ti int
	for k, r := range metaSeq {
		var want stream.Record
		switch r.(type) {
		case *stream.Desc:
			want = md.Descs[di]
			di++
		case *stream.InDom:
			want = md.InDoms[ii]
			ii++
		case *stream.LabelSet:
			want = md.LabelSets[li]
			li++
		case *stream.Text:
			want = md.Texts[ti]
			ti++
		}
		if !rdSameMeta(r, want) {
			return c, fmt.Errorf("metadata record %d (%s) differs from Meta's", k, r.Kind())
		}
	}
	return c, nil
}

// rdSameMeta compares two metadata records by their encoding (timestamps of
// descs and texts aside: the stream and Meta may give them different ones).
func rdSameMeta(a, b stream.Record) bool {
	x, err1 := AppendMeta(nil, a, 3)
	y, err2 := AppendMeta(nil, b, 3)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// rdPCPCount is what PCP's pmdumplog -d -i -m says about an archive.
type rdPCPCount struct {
	Results, Marks int
	PMIDs          int // distinct metric descriptors (-d)
	InDoms         int // distinct instance domains (-i)
	Versions       int // instance domain versions, all domains (-i)
}

var (
	rdDumpResult  = regexp.MustCompile(`^[0-9][0-9:.]* +[0-9]+ metrics?$`)
	rdDumpMark    = regexp.MustCompile(`^[0-9][0-9:.]* +<mark>$`)
	rdDumpVersion = regexp.MustCompile(`^[0-9][0-9:.]* +-?[0-9]+ instances?$`)
)

// rdPmdumplog runs pmdumplog on base and counts its output.
func rdPmdumplog(base string) (rdPCPCount, error) {
	var c rdPCPCount
	cmd := exec.Command("pmdumplog", "-z", "-d", "-i", "-m", base)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return c, err
	}
	if err := cmd.Start(); err != nil {
		return c, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		l := sc.Bytes()
		switch {
		case len(l) == 0:
		case bytes.HasPrefix(l, []byte("PMID: ")):
			c.PMIDs++
		case bytes.HasPrefix(l, []byte("InDom: ")):
			c.InDoms++
		case l[0] < '0' || l[0] > '9':
		case rdDumpResult.Match(l):
			c.Results++
		case rdDumpMark.Match(l):
			c.Marks++
		case rdDumpVersion.Match(l):
			c.Versions++
		}
	}
	if err := cmd.Wait(); err != nil {
		return c, fmt.Errorf("pmdumplog %s: %v: %s", base, err, stderr.Bytes())
	}
	return c, sc.Err()
}

// rdHeavyQA are the QA archives that take pmdumplog more than a second of CPU
// (the first two, single-block .xz volumes of 100+ MiB, take it minutes).
// Their counts were recorded from `pmdumplog -z -d -i -m` (PCP 6.0.3) with
// rdPmdumplog; PCPTOOLS_PCP_ALL=1 checks them against pmdumplog again.
var rdHeavyQA = map[string]rdPCPCount{
	"20180416.10.00":             {Results: 3316, Marks: 0, PMIDs: 1017, InDoms: 17, Versions: 510},
	"pcp-pidstat-process-args":   {Results: 4516, Marks: 0, PMIDs: 1160, InDoms: 23, Versions: 774},
	"bozo-20170904":              {Results: 2028, Marks: 14, PMIDs: 402, InDoms: 17, Versions: 459},
	"20201109":                   {Results: 858, Marks: 0, PMIDs: 1123, InDoms: 33, Versions: 118},
	"pcp-pidstat-process-states": {Results: 436, Marks: 0, PMIDs: 1168, InDoms: 15, Versions: 24},
	"20180606":                   {Results: 1731, Marks: 0, PMIDs: 395, InDoms: 12, Versions: 174},
	"20130706":                   {Results: 3003, Marks: 2, PMIDs: 292, InDoms: 10, Versions: 27},
}

// rdKnownWarnings lists the good QA archives that draw warnings, and why.
var rdKnownWarnings = map[string]string{
	"binning":  "index entry 2 points past the end of volume 0 (pmlogcheck agrees)",
	"chartqa1": "index timestamps go back by 1µs at entry 183 (pmlogcheck agrees)",
}

// TestRecordsQA reads every QA archive and compares the number of results,
// marks, descriptors and instance domains with what pmdumplog reports.
func TestRecordsQA(t *testing.T) {
	needQA(t)
	bases := rdBases(t, QADir)
	if len(bases) < 150 {
		t.Fatalf("only %d archives in %s", len(bases), QADir)
	}
	_, err := exec.LookPath("pmdumplog")
	havePCP := err == nil
	if !havePCP && os.Getenv("CI") != "" {
		t.Fatalf("pmdumplog missing in CI: %v", err)
	}
	all := os.Getenv("PCPTOOLS_PCP_ALL") != ""
	var mu sync.Mutex
	var results, marks int
	for _, base := range bases {
		name := filepath.Base(base)
		heavy, isHeavy := rdHeavyQA[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if isHeavy && testing.Short() {
				t.Skip("heavy archive, -short")
			}
			var warns []string
			a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			got, err := rdReadAll(a, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Index(); err != nil {
				t.Errorf("Index: %v", err)
			}
			if why, ok := rdKnownWarnings[name]; ok {
				if len(warns) == 0 {
					t.Errorf("expected a warning (%s), got none", why)
				}
			} else if len(warns) > 0 {
				t.Errorf("unexpected warnings: %q", warns)
			}
			md, _ := a.Meta()
			ours := rdPCPCount{Results: got.Results, Marks: got.Marks, PMIDs: len(md.ByPMID), InDoms: len(md.Resolved)}
			for _, vs := range md.Resolved {
				ours.Versions += len(vs)
			}
			mu.Lock()
			results += got.Results
			marks += got.Marks
			mu.Unlock()
			var want rdPCPCount
			switch {
			case isHeavy && !all:
				want = heavy
			case havePCP:
				want, err = rdPmdumplog(base)
				if err != nil {
					t.Fatal(err)
				}
				if isHeavy && want != heavy {
					t.Errorf("pmdumplog now says %+v, rdHeavyQA records %+v", want, heavy)
				}
			default:
				t.Skip("pmdumplog not installed")
			}
			if ours != want {
				t.Errorf("ours %+v\npmdumplog %+v", ours, want)
			}
		})
	}
	t.Cleanup(func() { t.Logf("%d archives: %d results, %d marks", len(bases), results, marks) })
}

// BadDir holds PCP's damaged QA archives.
const BadDir = "/var/lib/pcp/testsuite/badarchives"

// rdBad says what the reader reports for each file set in BadDir, and
// whether `pmdumplog -a` (PCP 6.0.3) flags it: exit status, anything on
// stderr, or an "Error:"/"Warning:" line from its index check.
var rdBad = []struct {
	name string
	want string // "error", "warn" or "ok"
	msg  string // part of what we report
	pcp  bool   // pmdumplog -a flags it
}{
	{"20180608.04.23-01", "warn", "index entry 1: data offset 0 outside volume 0", true},
	{"541380", "error", "unsupported archive version 1", true},
	{"951127.23.01", "error", "unsupported archive version 1", true},
	{"960624.08.17", "error", "unsupported archive version 1", true},
	{"ace", "error", "unsupported archive version 1", true},
	// pmlogcheck reports odd descriptor scales and a value format
	// change; neither is damage to the files.
	{"archive-20141125-000009", "ok", "", false},
	// Zero-filled tail after record 51: a logger that stopped.
	{"archive-20150417.131733", "warn", "offset 432512: truncated record, read stops at the last good record", true},
	{"babylon.percpu", "error", "unsupported archive version 1", true},
	{"babylon.pmview", "error", "unsupported archive version 1", true},
	{"badlabel-0", "ok", "", false}, // a copy of ok-foo
	{"badlabel-1", "error", "bad magic number 0xdeadbe02", true},
	// The index label has version 0: PCP refuses the archive, we read it
	// without the index.
	{"badlabel-2", "warn", "index ignored", true},
	{"badlen-0", "ok", "", false}, // a copy of ok-foo
	{"badlen-1", "error", "badlen-1.0: offset 132: data record: header length 132 does not match trailer length 128", true},
	{"badlen-10", "error", "badlen-10.0: offset 131: label truncated", true},
	{"badlen-11", "warn", "badlen-11.0: offset 132: truncated record", true},
	{"badlen-2", "warn", "badlen-2.0: offset 132: truncated record", true},
	{"badlen-3", "warn", "badlen-3.0: offset 132: truncated record", true},
	{"badlen-4", "error", "badlen-4.0: offset 0: file too short for a label", true},
	{"badlen-5", "error", "badlen-5.0: offset 42: label truncated", true},
	{"badlen-6", "error", "badlen-6.0: offset 0: label length 64, expected 132", true},
	{"badlen-7", "error", "badlen-7.0: offset 128: label trailer length 64 does not match header 132", true},
	{"badlen-8", "error", "badlen-8.0: offset 4: unsupported archive version 255", true},
	{"badlen-9", "error", "badlen-9.meta: offset 798: metadata record: record of 54 bytes runs past the end of the file", true},
	{"badlog-1", "warn", "badlog-1.0: offset 496: truncated record", true},
	{"badlog-2", "ok", "", false}, // a counter going down is not damage
	{"badlog-3", "warn", "badlog-3.0: offset 496: data record at 800000000.248493000 goes back in time", false},
	{"badlog-4", "warn", "badlog-4.0: offset 132: data record at 902428472.257504000 precedes the label's start time", false},
	{"badmeta-1", "warn", "index entry 2: metadata offset 851 outside the .meta file", true},
	{"badmeta-2", "ok", "", false}, // impossible units: pmlogcheck's business
	{"badmeta-3", "error", "badmeta-3.meta: offset 565: instance domain 29.2: instance 100 has no name", true},
	{"badmeta-4", "error", "badmeta-4.meta: offset 561: instance domain 29.2: negative instance number -1", true},
	{"badmeta-5", "error", "badmeta-5.meta: offset 601: instance domain 29.2: name offset 76 of instance 200 beyond the 72-byte string table", true},
	{"badmeta-6", "error", "badmeta-6.meta: offset 6802: metadata record type 5 does not belong in a v2 archive", false},
	{"badmeta-7", "error", "badmeta-7.meta: offset 4266: metadata record type 2 does not belong in a v3 archive", false},
	{"badti-1", "warn", "index ends with a partial entry (10 of 20 bytes)", false},
	{"badti-2", "warn", "index entry 0: negative volume number -1", true},
	{"badti-3", "warn", "index entry 1: volume 2 does not exist", true},
	{"badti-4", "warn", "index entry 0: data offset 1 outside volume 0", true},
	{"bigace", "error", "unsupported archive version 1", true},
	{"bozo-vm-disk", "ok", "", false}, // metrics of domain 511 with indoms of 60: pmlogcheck's business
	{"bozo.client", "error", "unsupported archive version 1", true},
	{"bug", "error", "unsupported archive version 1", true},
	{"corrupted_labelset", "error", "corrupted_labelset.meta: offset 2101: metadata record: header length 2415 does not match trailer length 1868786533", true},
	{"empty", "error", "empty.meta: offset 0: file too short for a label (0 bytes)", true},
	{"err_v1", "error", "unsupported archive version 1", true},
	{"logsummary-bug", "ok", "", false}, // a value PCP cannot convert
	{"ok-truncbin", "warn", "ok-truncbin.0: offset 204456: truncated record", true},
	{"old611", "ok", "", false}, // metrics of domain 511 with indoms of 3
	// Stray files: not archives at all.
	{"bozo.client_v2.meta.bad.1", "error", "not a PCP archive file", true},
	{"bozo.client_v2.meta.bad.2", "error", "not a PCP archive file", true},
	{"GNUmakefile", "error", "not a PCP archive file", true},
	{"README", "error", "not a PCP archive file", true},
	{"mk.badlabel", "error", "not a PCP archive file", true},
	{"mk.badlen", "error", "not a PCP archive file", true},
	{"mk.badlog", "error", "not a PCP archive file", true},
	{"mk.badti", "error", "not a PCP archive file", true},
}

// rdExercise does everything a reader can do with name, and returns the
// first error and every warning.
func rdExercise(name string) (warns []string, err error) {
	warn := WithWarn(func(e error) { warns = append(warns, e.Error()) })
	a, err := Open(name, warn)
	if err != nil {
		return warns, err
	}
	var firstErr error
	keep := func(e error) {
		if firstErr == nil {
			firstErr = e
		}
	}
	it := a.Records()
	var last stream.Timestamp
	n := 0
	for it.Next() {
		last = it.At().Time()
		n++
	}
	keep(it.Err())
	it.Close()
	if _, err := a.Index(); err != nil {
		keep(err)
	}
	if _, err := a.Meta(); err != nil {
		keep(err)
	}
	// Seek to the middle.
	mid := a.Label().Start
	mid.Sec += (last.Sec - mid.Sec) / 2
	it = a.Records(From(mid))
	for it.Next() {
	}
	keep(it.Err())
	it.Close()
	return warns, firstErr
}

// rdPCPFlags reports whether pmdumplog -a complains about name.
func rdPCPFlags(name string) (bool, string) {
	cmd := exec.Command("pmdumplog", "-a", name)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || stderr.Len() > 0 {
		return true, fmt.Sprint(err, " ", firstLine(stderr.String()))
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Error:") || strings.HasPrefix(l, "Warning:") {
			return true, l
		}
	}
	return false, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestBadArchives opens, reads, indexes and seeks in every file set of
// PCP's bad QA archives: the reader must never panic or hang, must flag
// everything pmdumplog flags, and reports what the table says.
func TestBadArchives(t *testing.T) {
	needQA(t)
	if _, err := os.Stat(BadDir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	_, err := exec.LookPath("pmdumplog")
	havePCP := err == nil
	// Every file set in the directory must be in the table.
	ents, err := os.ReadDir(BadDir)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range rdBad {
		listed[c.name] = true
	}
	for _, e := range ents {
		n, _ := compress.SplitSuffix(e.Name())
		if i := strings.LastIndexByte(n, '.'); i > 0 && (n[i+1:] == "meta" || n[i+1:] == "index" || isDigits(n[i+1:])) && listed[n[:i]] {
			continue
		}
		if !listed[e.Name()] {
			t.Errorf("%s is not in the table", e.Name())
		}
	}
	for _, c := range rdBad {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			warns, err := rdExercise(filepath.Join(BadDir, c.name))
			got := "ok"
			report := strings.Join(warns, "\n")
			switch {
			case err != nil:
				got = "error"
				report = err.Error()
				var fe *FormatError
				if strings.Contains(c.msg, "offset") && !errors.As(err, &fe) {
					t.Errorf("error is a %T, not a *FormatError", err)
				}
			case len(warns) > 0:
				got = "warn"
			}
			if got != c.want || !strings.Contains(report, c.msg) {
				t.Errorf("got %s:\n%s\nwant %s containing %q", got, report, c.want, c.msg)
			}
			t.Logf("%s: %s", got, firstLine(report))
			if !havePCP {
				return
			}
			flags, why := rdPCPFlags(filepath.Join(BadDir, c.name))
			if flags != c.pcp {
				t.Errorf("pmdumplog -a flags it: %v (%s); the table says %v", flags, why, c.pcp)
			}
			if flags && got == "ok" {
				t.Errorf("pmdumplog -a flags it (%s) and we do not", why)
			}
		})
	}
}

// TestBadMetaFiles reads the stray damaged .meta files as the .meta of an
// archive with no volume.
func TestBadMetaFiles(t *testing.T) {
	needQA(t)
	for _, c := range []struct{ file, msg string }{
		{"bozo.client_v2.meta.bad.1", "x.meta: offset 235: metadata record: impossible record length 4294967102"},
		{"bozo.client_v2.meta.bad.2", "x.meta: offset 454: metadata record: header length 80 does not match trailer length 4294967295"},
	} {
		b, err := os.ReadFile(filepath.Join(BadDir, c.file))
		if err != nil {
			t.Skip(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.meta"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		warns, err := rdExercise(filepath.Join(dir, "x"))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %q", c.file, err, c.msg)
		}
		if len(warns) == 0 || !strings.Contains(warns[0], "no data volume") {
			t.Errorf("%s: warnings %q, want one about the missing volume", c.file, warns)
		}
	}
}

// rdCopy copies the files of the plain archive base into dir as name.*
// and returns the new base.
func rdCopy(t *testing.T, base, dir, name string) string {
	t.Helper()
	files, _ := filepath.Glob(base + ".*")
	for _, f := range files {
		suffix := strings.TrimPrefix(f, base)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+suffix), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

func TestOpenNames(t *testing.T) {
	needQA(t)
	const name = "20190628.04.03" // compressed .meta and volumes, ends in digits
	base := filepath.Join(QADir, name)
	wantFiles := []string{base + ".meta.xz", base + ".index", base + ".0.xz", base + ".1.xz"}

	dir := t.TempDir()
	for _, f := range wantFiles {
		if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	cwd, _ := os.Getwd()
	rel, err := filepath.Rel(cwd, filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, base string }{
		{base, base},
		{base + ".meta", base}, // the plain name of a compressed file
		{base + ".meta.xz", base},
		{base + ".index", base},
		{base + ".0", base},
		{base + ".0.xz", base},
		{base + ".1.xz", base},
		{dir, filepath.Join(dir, name)},
		{filepath.Join(dir, name+".1"), filepath.Join(dir, name)},
		{rel, rel},
		{rel + ".0.xz", rel},
	} {
		var warns []string
		a, err := Open(c.arg, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
		if err != nil {
			t.Errorf("Open(%s): %v", c.arg, err)
			continue
		}
		if a.Base() != c.base || a.Version() != 2 || !slices.Equal(a.Volumes(), []int{0, 1}) || len(warns) > 0 {
			t.Errorf("Open(%s): base %s version %d volumes %v warnings %q", c.arg, a.Base(), a.Version(), a.Volumes(), warns)
		}
		want := wantFiles
		if c.base != base {
			want = nil
			for _, f := range wantFiles {
				want = append(want, c.base+strings.TrimPrefix(f, base))
			}
		}
		if !slices.Equal(a.Files(), want) {
			t.Errorf("Open(%s): files %q, want %q", c.arg, a.Files(), want)
		}
		if l := a.Label(); l.Vol != -1 || l.Hostname == "" {
			t.Errorf("Open(%s): label %+v", c.arg, l)
		}
	}

	// Names that are not archives.
	for _, arg := range []string{filepath.Join(QADir, "no-such-archive"), filepath.Join(QADir, "README"), base + ".7", base + ".metaX", "", t.TempDir()} {
		if a, err := Open(arg); err == nil {
			t.Errorf("Open(%q) = %s, want an error", arg, a.Base())
		}
	}

	// A file that is not an archive's: no archive of that name exists
	// (libpcp's words under PCP's names: "No such file or directory"),
	// and an archive folio is named as such.
	folio := filepath.Join(t.TempDir(), "hosts.folio")
	if err := os.WriteFile(folio, []byte("PCPFolio\nVersion: 1\nArchive:\thost\thost/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		filepath.Join(QADir, "README"): "not a PCP archive file",
		folio:                          "an archive folio (as pmafm reads), not an archive: give it to --folio",
	} {
		_, err := Open(arg)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want %q, fs.ErrNotExist", arg, err, want)
		}
	}

	// A directory with two archives: Open lists them, OpenDir opens both,
	// in time order.
	rdCopy(t, filepath.Join(QADir, "ok-foo"), dir, "b-later")
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "2 archives ("+name+", b-later)") {
		t.Errorf("Open(dir with two archives): %v", err)
	}
	as, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || !as[0].Label().Start.Before(as[1].Label().Start) {
		t.Errorf("OpenDir: %d archives, not in time order", len(as))
	}
	if filepath.Base(as[0].Base()) != "b-later" { // ok-foo is from 1998
		t.Errorf("OpenDir: first is %s", as[0].Base())
	}
}

// TestOpenPlainAndCompressed: when a volume exists both plain and
// compressed, the plain one is read, with a warning.
func TestOpenPlainAndCompressed(t *testing.T) {
	needQA(t)
	dir := t.TempDir()
	base := rdCopy(t, filepath.Join(QADir, "ok-foo"), dir, "x")
	b, _ := os.ReadFile(base + ".0")
	if err := os.WriteFile(base+".0.gz", rdGzip(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	if f := a.Files(); f[len(f)-1] != base+".0" || len(warns) != 1 || !strings.Contains(warns[0], "both x.0 and x.0.gz") {
		t.Errorf("files %q, warnings %q", f, warns)
	}
	// Without the plain one, the compressed one is read, with the same
	// result.
	os.Remove(base + ".0")
	a, err = Open(base + ".0.gz")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rdReadAll(a, false)
	if err != nil || c.Results != 9 {
		t.Errorf("gz volume: %+v, %v", c, err)
	}
}

func rdGzip(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestNoVolume: an archive without data volumes reads as its metadata.
func TestNoVolume(t *testing.T) {
	needQA(t)
	dir := t.TempDir()
	base := rdCopy(t, filepath.Join(QADir, "ok-foo"), dir, "x")
	os.Remove(base + ".0")
	os.Remove(base + ".index")
	var warns []string
	a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rdReadAll(a, false)
	if err != nil || c.Results != 0 || c.Descs == 0 {
		t.Errorf("%+v, %v", c, err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "no data volume") {
		t.Errorf("warnings %q", warns)
	}
}

type rdData struct {
	t    stream.Timestamp
	mark bool
	body string
}

// rdDataRecords returns the data records of a stream and the number of
// metadata records.
func rdDataRecords(t *testing.T, it stream.CloserIterator) (data []rdData, meta int) {
	t.Helper()
	defer it.Close()
	var last stream.Timestamp
	for it.Next() {
		r := it.At()
		if r.Time().Before(last) {
			t.Fatalf("time goes back: %s after %s", r.Time(), last)
		}
		last = r.Time()
		switch r := r.(type) {
		case *stream.Result:
			data = append(data, rdData{r.T, false, string(r.Body)})
		case *stream.Mark:
			data = append(data, rdData{r.T, true, ""})
		case *stream.Label:
		default:
			meta++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return data, meta
}

// TestRecordsFrom seeks with and without the index and compares with a
// full read.
func TestRecordsFrom(t *testing.T) {
	needQA(t)
	for _, name := range []string{"ok-mv-bigbin", "20041125", "omnibus_v3", "20190628.04.03"} {
		base := filepath.Join(QADir, name)
		var warns []string
		a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
		if err != nil {
			t.Fatal(err)
		}
		all, nmeta := rdDataRecords(t, a.Records())
		// The same archive without its index.
		dir := t.TempDir()
		for _, f := range a.Files() {
			if !strings.Contains(f, ".index") {
				os.Symlink(f, filepath.Join(dir, filepath.Base(f)))
			}
		}
		noIdx, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < 3 {
			t.Fatalf("%s: only %d data records", name, len(all))
		}
		cases := []stream.Timestamp{
			{Sec: 0},
			a.Label().Start,
			all[1].t,
			all[len(all)/2].t,
			all[len(all)/2].t.Add(1),
			all[len(all)-1].t,
			all[len(all)-1].t.Add(1),
		}
		for _, from := range cases {
			var want []rdData
			for _, d := range all {
				if !d.t.Before(from) {
					want = append(want, d)
				}
			}
			for _, ar := range []*Archive{a, noIdx} {
				it := ar.Records(From(from))
				got, gotMeta := rdDataRecords(t, it)
				if !slices.Equal(got, want) || gotMeta != nmeta {
					t.Errorf("%s From(%s): %d data records, %d metadata; want %d and %d", ar.Base(), from, len(got), gotMeta, len(want), nmeta)
				}
			}
		}
		// With the index, a seek near the end reads few records.
		it := a.Records(From(all[len(all)-1].t)).(*archiveIter)
		rdDataRecords(t, it)
		if _, err := a.Index(); err == nil && it.framed > len(all)/2 && len(all) > 20 {
			t.Errorf("%s: From(last) framed %d of %d records: the index was not used", name, it.framed, len(all))
		}
		if len(warns) > 0 {
			t.Errorf("%s: warnings %q", name, warns)
		}
	}
}

// TestDamage damages copies of ok-mv-foo (volumes .0: 4 records, .1: 3,
// .2: 2) and checks what the reader reports. Damage at the end of the
// last volume (a logger that crashed or is still writing) ends the read
// with a warning; anywhere else it is an error naming file and offset.
func TestDamage(t *testing.T) {
	needQA(t)
	put32 := func(off int64, v uint32) func([]byte) []byte {
		return func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[off:], v)
			return b
		}
	}
	truncate := func(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }
	appendBytes := func(extra []byte) func([]byte) []byte {
		return func(b []byte) []byte { return append(b, extra...) }
	}
	ff := bytes.Repeat([]byte{0xff}, 100)
	cases := []struct {
		name    string
		file    string // suffix of the file to change
		change  func([]byte) []byte
		want    string // "error" or "warn"
		msg     string
		results int // results read (for warnings)
	}{
		{"truncated last record", ".2", truncate(538), "warn", "x.2: offset 340: truncated record, read stops at the last good record: record of 208 bytes runs past the end of the file (198 bytes left)", 8},
		{"partial length word", ".2", appendBytes([]byte{0, 1}), "warn", "x.2: offset 548: truncated record, read stops at the last good record: 2 stray bytes", 9},
		{"zero tail", ".2", appendBytes(make([]byte, 5000)), "warn", "x.2: offset 548: truncated record, read stops at the last good record: impossible record length 0", 9},
		{"zero tail after a length", ".2", appendBytes(append([]byte{0, 0, 0, 200}, make([]byte, 300)...)), "warn", "x.2: offset 548: truncated record, read stops at the last good record: header length 200 does not match trailer length 0", 9},
		{"garbage tail", ".2", appendBytes(ff), "warn", "x.2: offset 548: truncated record, read stops at the last good record: impossible record length 4294967295 (100 bytes left in the file)", 9},
		{"bad trailer of last record", ".2", put32(544, 7), "warn", "x.2: offset 340: truncated record, read stops at the last good record: header length 208 does not match trailer length 7", 8},
		{"bad trailer before a good record", ".2", put32(336, 7), "error", "x.2: offset 132: data record: header length 208 does not match trailer length 7", 0},
		{"truncated volume that is not the last", ".0", truncate(900), "error", "x.0: offset 704: data record: record of 212 bytes runs past the end of the file (196 bytes left)", 0},
		{"impossible length", ".0", put32(288, 8), "error", "x.0: offset 288: data record: impossible record length 8 (628 bytes left in the file)", 0},
		{"huge length", ".0", put32(288, 0x7fffffff), "error", "x.0: offset 288: data record: impossible record length 2147483647", 0},
		{"garbage after the last record of a volume", ".1", appendBytes(ff), "error", "x.1: offset 760: data record: impossible record length 4294967295", 0},
		{"value pointer out of the record", ".1", put32(164, 0x7fffffff), "error", "x.1: offset 132: data record: body offset 20: value pointer 2147483647 beyond the record", 0},
		{"negative numpmid", ".1", put32(144, 0xffffffff), "error", "x.1: offset 144: negative numpmid -1", 0},
		{"impossible timestamp", ".1", put32(140, 2000000), "warn", "x.1: offset 132: data record has an impossible timestamp (902428484 s, 2000000000 ns)", 9},
		// F8: microseconds whose nanoseconds do not fit 32 bits would be
		// carried as another time: refused, with the field's offset.
		{"microseconds past 32-bit nanoseconds (F8)", ".1", put32(140, 3000000), "error", "x.1: offset 140: timestamp's microseconds field is 3000000, far outside 0 to 999999", 0},
		{"time goes back", ".1", put32(136, 1), "warn", "x.1: offset 132: data record at 1.368357000 goes back in time from 902428483.368148000", 9},
		// A later volume whose label libpcp refuses is skipped, as
		// libpcp skips it; one that names another host is read, as
		// libpcp reads it, with a warning.
		{"wrong volume in label", ".1", put32(20, 5), "warn", "x.1: offset 20: label volume field is 5, expected 1", 6},
		{"bad magic in a later volume", ".1", put32(4, 0xdeadbe02), "warn", "x.1: offset 4: bad magic number", 6},
		{"other host", ".1", func(b []byte) []byte { b[24] ^= 1; return b }, "warn", "x.1: offset 0: label names host", 9},
		{"other host in the first volume", ".0", func(b []byte) []byte { b[24] ^= 1; return b }, "error", "x.0: offset 0: label names host", 0},
		{"other pmlogger PID in the first volume", ".0", put32(8, 1), "error", "x.0: offset 8: label says pmlogger PID 1", 0},
		{"other host in the index", ".index", func(b []byte) []byte { b[24] ^= 1; return b }, "warn", "index ignored: ", 9},
		{"index entry out of the volume", ".index", put32(132+20+16, 5000), "warn", "x.index: offset 152: index entry 1: data offset 5000 outside volume 0", 9},
		{"truncated .meta", ".meta", func(b []byte) []byte { return b[:len(b)-5] }, "error", "x.meta: offset 797: metadata record: record of 54 bytes runs past the end of the file (49 bytes left)", 0},
		{"unknown metadata type", ".meta", put32(136, 99), "error", "x.meta: offset 136: unknown metadata record type 99", 0},
		{"v3 metadata type in v2", ".meta", put32(136, TypeInDom), "error", "x.meta: offset 136: metadata record type 5 does not belong in a v2 archive", 0},
		{"label only", ".2", truncate(132), "warn", "x.index: offset 212: index entry 4: data offset 340 outside volume 2 (132 bytes, label 132)", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base := rdCopy(t, filepath.Join(QADir, "ok-mv-foo"), dir, "x")
			b, err := os.ReadFile(base + c.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+c.file, c.change(b), 0o644); err != nil {
				t.Fatal(err)
			}
			var warns []string
			var results int
			err = func() error {
				a, err := Open(base, WithWarn(func(e error) { warns = append(warns, e.Error()) }))
				if err != nil {
					return err
				}
				it := a.Records()
				defer it.Close()
				for it.Next() {
					if _, ok := it.At().(*stream.Result); ok {
						results++
					}
				}
				if err := it.Err(); err != nil {
					return err
				}
				_, err = a.Index()
				return err
			}()
			got, report := "ok", strings.Join(warns, "\n")
			if err != nil {
				got, report = "error", err.Error()
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Errorf("%T is not a *FormatError", err)
				}
			} else if len(warns) > 0 {
				got = "warn"
			}
			if got != c.want || !strings.Contains(report, c.msg) {
				t.Errorf("got %s: %s\nwant %s: %s", got, report, c.want, c.msg)
			}
			if got != "error" && results != c.results {
				t.Errorf("%d results, want %d", results, c.results)
			}
		})
	}
}

// TestNotRegular: a FIFO named like a volume must not make Open hang.
func TestNotRegular(t *testing.T) {
	needQA(t)
	dir := t.TempDir()
	base := rdCopy(t, filepath.Join(QADir, "ok-foo"), dir, "x")
	if err := syscall.Mkfifo(base+".1", 0o644); err != nil {
		t.Skip(err)
	}
	_, err := Open(base)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("got %v", err)
	}
}

// TestRecordsOrder checks the interleaving rule against the raw .meta:
// when a data record at t is emitted, the next .meta record not yet
// emitted is a timestamped one later than t; an untimed record carries
// the time of the record before it.
func TestRecordsOrder(t *testing.T) {
	needQA(t)
	for _, name := range []string{"omnibus_v3", "omnibus-nomark_v3", "20041125", "ok-mv-bigbin", "bozo-20170904", "mark-bug", "interpmark"} {
		base := filepath.Join(QADir, name)
		raw, err := os.ReadFile(base + ".meta")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		l, _ := DecodeLabel(raw)
		recs, _ := frames(raw, LabelSize(l.Version))
		var file []stream.Record
		for _, r := range recs {
			m, err := DecodeMeta(r)
			if err != nil {
				t.Fatal(err)
			}
			file = append(file, m)
		}
		a, err := Open(base)
		if err != nil {
			t.Fatal(err)
		}
		it := a.Records()
		next := 0 // index in file of the next metadata record expected
		var last stream.Timestamp
		data := 0
		for it.Next() {
			switch r := it.At().(type) {
			case *stream.Label:
				last = r.Start
			case *stream.Result, *stream.Mark:
				if next < len(file) {
					switch m := file[next].(type) {
					case *stream.Desc, *stream.Text:
						t.Fatalf("%s: data record at %s emitted while untimed %s record %d waits", name, r.Time(), m.Kind(), next)
					default:
						if !m.Time().After(r.Time()) {
							t.Fatalf("%s: data record at %s emitted before %s record %d at %s", name, r.Time(), m.Kind(), next, m.Time())
						}
					}
				}
				last = r.Time()
				data++
			default:
				if next >= len(file) || !rdSameMeta(r, file[next]) {
					t.Fatalf("%s: metadata record %d out of file order", name, next)
				}
				switch r.(type) {
				case *stream.Desc, *stream.Text:
					if r.Time() != last {
						t.Fatalf("%s: untimed record %d at %s, want %s", name, next, r.Time(), last)
					}
				}
				next++
				last = r.Time()
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		if next != len(file) || data == 0 {
			t.Errorf("%s: %d of %d metadata records, %d data records", name, next, len(file), data)
		}
	}
}

// TestConcurrentUse: one Archive, several goroutines.
func TestConcurrentUse(t *testing.T) {
	needQA(t)
	a, err := Open(filepath.Join(QADir, "ok-mv-bigbin"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := rdReadAll(a, false)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := a.Meta(); err != nil {
				t.Error(err)
			}
			if _, err := a.Index(); err != nil {
				t.Error(err)
			}
			got, err := rdReadAll(a, false, From(a.Label().Start))
			if err != nil || got != want {
				t.Errorf("%+v, %v", got, err)
			}
		})
	}
	wg.Wait()
}

// TestCorruptCompressed: a damaged compressed volume is an error naming
// it, at Open (formats without an index are decoded there).
func TestCorruptCompressed(t *testing.T) {
	needQA(t)
	dir := t.TempDir()
	base := rdCopy(t, filepath.Join(QADir, "ok-foo"), dir, "x")
	b, _ := os.ReadFile(base + ".0")
	z := rdGzip(t, b)
	os.Remove(base + ".0")
	if err := os.WriteFile(base+".0.gz", z[:len(z)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(base)
	if err == nil || !strings.Contains(err.Error(), "x.0.gz") {
		t.Errorf("got %v", err)
	}
}

// TestRecordsFromRescanOneLabel: a seek whose index entry leads to a
// damaged record starts again from the first volume (pcp-mpstat3: "index
// not used, scanning from the start"); the reader must not then hand out
// the first volume's label a second time (it came out first, as the
// archive's), which pcpcat --json -S printed as a second label line.
func TestRecordsFromRescanOneLabel(t *testing.T) {
	needQA(t)
	var warns []string
	a, err := Open(filepath.Join(QADir, "pcp-mpstat3"), WithWarn(func(e error) { warns = append(warns, e.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	it := a.Records(From(a.Label().Start.Add(30 * 1e9)))
	defer it.Close()
	labels := 0
	for it.Next() {
		if _, ok := it.At().(*stream.Label); ok {
			labels++
		}
	}
	if !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "scanning from the start") }) {
		t.Fatalf("no rescan (the fixture changed?): warnings %q", warns)
	}
	if labels != 1 {
		t.Errorf("%d labels, want 1 (warnings %q)", labels, warns)
	}
}
