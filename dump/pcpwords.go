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
	case errors.Is(err, format.ErrLabel):
		return pcpErrors[-12372] // PM_ERR_LABEL
	case errors.As(err, &fe):
		return ErrStrLogRec
	}
	return err.Error()
}

// LibpcpLosesEnd reports whether libpcp fails to locate the end of a,
// whose data ends in damage at tail (the reader's format.ErrTruncated
// warning): its search reads the last volume backwards from its end
// (which fails at the damage), then forwards from the last temporal index
// entry inside the volume, and finds the end only if a whole record
// follows that entry before the damage. (With several volumes it falls
// back on the one before, which is taken to be sound.)
func LibpcpLosesEnd(a *format.Archive, tail *format.FormatError) bool {
	vols := a.Volumes()
	if len(vols) != 1 || !strings.HasSuffix(tail.File, fmt.Sprintf(".%d", vols[0])) {
		return false
	}
	st, err := os.Stat(tail.File)
	if err != nil {
		return false
	}
	idx, _ := a.Index()
	for i := len(idx) - 1; i >= 0; i-- {
		if e := idx[i]; int(e.Vol) == vols[0] && e.DataOff <= st.Size() {
			return e.DataOff >= tail.Offset
		}
	}
	return true
}
