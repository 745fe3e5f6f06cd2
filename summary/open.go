package summary

import (
	"io"
	"os"
	"strings"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/stream"
)

// OpenStdin reads the record stream on stdin. It is summarised as it
// arrives when the options need one look at the records and no end up
// front (CanStream), taking the metadata as it comes (pcprewrite's and
// pcpextract's streams, which have no METADATA frame; and those with
// one, pcpcat's, which starts from the frame's: a stream concatenated
// after the first may bring metadata the frame had not), unless it is a
// reduced archive (CanStreamLate), which is read with the whole metadata
// of its frame or else spilled. Any other is spilled to a scratch
// archive first (a -S or -T counted back from the end needs the end, -B
// a second look at the values).
func OpenStdin(stdin *os.File, o *Options, warn func(error)) (Archive, error) {
	s, err := toolio.OpenStdinFrameLate(stdin, "pcpsummary-", CanStream(o), CanStreamLate, warn)
	if err != nil {
		return nil, err
	}
	// A result of a metric with no descriptor before it ends the
	// summary with an error, as it ends a copy of the stream: the
	// summary, which passes over metrics it does not know, would leave
	// it out without a word (stream.Described).
	switch {
	case s.Meta != nil:
		return &streamed{NewStreamed(s.Meta, stream.Described(s.Iter)), s}, nil
	case s.Head != nil:
		return &streamed{NewStreamedLate(s.Head, stream.Described(s.Iter)), s}, nil
	}
	return &spilled{s.Spilled, s}, nil
}

// streamed is a stream summarised as it arrives, and its input to close.
type streamed struct {
	*Streamed
	io.Closer
}

// spilled is a stream's scratch archive, removed on Close.
type spilled struct {
	*format.Archive
	io.Closer
}

// Open opens what libpcp takes as one archive context: an archive, a
// comma-separated list of archives, or a directory of archives.
func Open(name string, warn func(error)) (Archive, error) {
	if strings.Contains(name, ",") {
		as, names, err := toolio.OpenArchives(strings.Split(name, ","), warn)
		if err != nil {
			return nil, err
		}
		return Multi(names, as), nil
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		as, err := format.OpenDir(name, format.WithWarn(warn))
		if err != nil {
			return nil, err
		}
		names := make([]string, len(as))
		for i, a := range as {
			names[i] = a.Base()
		}
		return Multi(names, as), nil
	}
	return format.Open(name, format.WithWarn(warn))
}

// DataSize is the size of the data volumes of a, for the progress display
// (0 when unknown: no display).
func DataSize(a Archive) int64 {
	if s, ok := a.(interface{ DataSize() int64 }); ok {
		return s.DataSize()
	}
	return 0
}
