package dump

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pcptools/pcptools/format"
)

// What libpcp says where pmdumplog (and the other tools that read an
// archive through libpcp) meets damage, for pcpcat under PCP's names.

// ErrStrLogRec is pmErrStr(PM_ERR_LOGREC).
var ErrStrLogRec = pcpErrors[-12373]

// LibpcpOpenError is what pmErrStr says for an error in opening an
// archive: libpcp's words for a missing file, a bad or disagreeing label
// (format.ErrLabel), an empty file (format.ErrEmptyFile) or a damaged
// record; other errors as they are.
func LibpcpOpenError(err error) string {
	var fe *format.FormatError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, format.ErrEmptyFile):
		return pcpErrors[-12354] // PM_ERR_NODATA
	case errors.Is(err, format.ErrNoVolume):
		return pcpErrors[-12375] // PM_ERR_LOGFILE
	case errors.Is(err, format.ErrLabel):
		return pcpErrors[-12372] // PM_ERR_LABEL
	case errors.As(err, &fe):
		return ErrStrLogRec
	}
	return err.Error()
}

// LibpcpBadRecord reports whether err is a data record libpcp's read of
// a volume calls corrupted and stops at, where our reader fails (a record
// whose header and trailer lengths disagree, QA's badlen-1), and where
// the volume's file descriptor then is, as pmlogextract and pmlogrewrite
// report it ("Error occurred at byte offset AT into a file of SIZE
// bytes"): libpcp has read the whole record through stdio's 4 KiB buffer
// and does not seek back.
func LibpcpBadRecord(err error) (file string, at, size int64, ok bool) {
	var fe *format.FormatError
	if !errors.As(err, &fe) || fe.Err != nil || !strings.HasPrefix(fe.Msg, "data record: header length ") {
		return "", 0, 0, false
	}
	var hl, tl int64
	if _, e := fmt.Sscanf(fe.Msg, "data record: header length %d does not match trailer length %d", &hl, &tl); e != nil {
		return "", 0, 0, false
	}
	st, serr := os.Stat(fe.File)
	if serr != nil {
		return "", 0, 0, false
	}
	return fe.File, min(st.Size(), (fe.Offset+hl+4095)/4096*4096), st.Size(), true
}

// LibpcpRefusal is why libpcp will not open a, which our reader opened,
// for LibpcpOpenError: no data volume at all (format.ErrNoVolume), or a
// .meta or .index that holds its label alone (format.ErrEmptyFile); nil
// when neither.
func LibpcpRefusal(a *format.Archive) error {
	switch {
	case len(a.Volumes()) == 0:
		return format.ErrNoVolume
	case a.LabelOnlyFile():
		return format.ErrEmptyFile
	}
	return nil
}

// NoDataError is why libpcp will not open an archive with no data record
// (a.LabelsOnly()): LibpcpRefusal's reason, or volumes that hold their
// labels alone.
func NoDataError(a *format.Archive) error {
	if err := LibpcpRefusal(a); err != nil {
		return err
	}
	return format.ErrEmptyFile
}

// LibpcpView notes, among an archive reader's warnings, the ones libpcp
// acts on where our reader warns and reads on: an .index with a bad label
// (libpcp refuses the archive) and a data volume that ends inside a
// record (libpcp may then fail to find the archive's end, or take a few
// stray bytes as the end). The tools under PCP's names watch their reader
// with one (Note) and say what libpcp would.
type LibpcpView struct {
	IndexErr error               // the first .index label warning
	Tail     *format.FormatError // the first truncated-record warning
	TailErr  error               // ... as it came (wrapped)
}

// Note takes a reader warning: it reports whether err was one of those
// (kept, first of each kind).
func (v *LibpcpView) Note(err error) bool {
	var fe *format.FormatError
	switch {
	case (errors.Is(err, format.ErrLabel) || errors.Is(err, format.ErrEmptyFile)) && errors.As(err, &fe) && strings.HasSuffix(fe.File, ".index"):
		if v.IndexErr == nil {
			v.IndexErr = err
		}
		return true
	case errors.Is(err, format.ErrTruncated) && errors.As(err, &fe):
		if v.Tail == nil {
			v.Tail, v.TailErr = fe, err
		}
		return true
	}
	return false
}

// LosesEnd reports whether libpcp fails to locate a's end, where the
// tools under PCP's names warn that they cannot (LostEndWarning). Only a
// data volume that ends in damage (the truncation noted) can make it
// fail; then its files are read as libpcp reads them (LibpcpFindsEnd).
// (That replaces a rule made from where the truncation lies, which was
// wrong where a temporal index entry points before the first record.)
func (v *LibpcpView) LosesEnd(a *format.Archive) bool {
	return v.Tail != nil && !LibpcpFindsEnd(a.Base())
}

// TailIsEnd reports whether the truncated volume noted ends in fewer
// stray bytes than a length word, which libpcp takes as the volume's end
// (a longer tail it reads as a record that fails).
func (v *LibpcpView) TailIsEnd() bool {
	if v.Tail == nil {
		return false
	}
	st, err := os.Stat(v.Tail.File)
	return err == nil && st.Size()-v.Tail.Offset < 4
}

// LostEndWarning is what libpcp's tools print where they cannot find an
// archive's end (LosesEnd), and then read on.
func LostEndWarning(prog, name string) string {
	return fmt.Sprintf("%s: Cannot locate end of archive %s: %s\n", prog, name, ErrStrLogRec) +
		"\nWARNING: This archive is sufficiently damaged that it may not be possible to\n" +
		"         produce complete information.  Continuing and hoping for the best.\n\n"
}
