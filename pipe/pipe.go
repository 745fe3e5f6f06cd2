// Package pipe is the wire format that joins the tools of a pipeline:
// one tool writes its record stream on standard output, the next reads it
// on standard input. It sits beside format, above stream and format (it
// frames records in format's codec), so that the layers depend one way:
// stream, then format, then pipe, then the tools.
//
//	pcpcat a b ──Writer──▶ stdout │ stdin ──Reader (stream.Iterator)──▶ pcpextract -o out
//
// A stream is a 12-byte header (magic and version) followed by frames. A
// frame is a 20-byte header (kind, flags, payload length and the record's
// stream timestamp) followed by one record in PCP's own version 3 on-disk
// encoding, length words included, so the codec in package format does all
// the work and a result's bytes are copied, never decoded. The stream ends
// with an END frame, so that a producer that dies half-way is an error
// downstream and not a silently short archive; a producer that fails on
// purpose sends an ERROR frame carrying its message instead. The layout is
// specified byte for byte in docs/stream.md.
//
// Designs rejected:
//   - Raw archive records back to back, as in a .meta file and a volume: a
//     data record and a metadata record cannot be told apart (one starts
//     with a timestamp, the other with a type word), descriptors and help
//     text have no timestamp on disk, and nothing marks the end.
//   - gob, JSON or protobuf: a second encoding of every record to keep in
//     step with PCP's, and results would have to be decoded and re-encoded
//     at every stage instead of copied.
//   - Version 2 encoding: it cannot carry nanoseconds or 64-bit seconds. A
//     v2 origin is kept in a flag instead, so that v2 in, v2 out still holds
//     across a pipe; a v2 result keeps its pointers under that flag (stream
//     version 2), so that no stage moves them.
//   - Checksums per frame: a pipe does not flip bits, and the frames are
//     already checked by their length words and by the record decoders.
//   - Variable-length integers in the frame header: a fixed header is what
//     makes a second implementation (a Python reader, say) a page of code.
package pipe

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pcptools/pcptools/format"
)

// Magic opens every stream. The first byte is not ASCII, so that text is
// never mistaken for a stream, and no PCP archive file, xz, zstd, gzip or
// bzip2 file starts with it.
const Magic = "\x89PCPpipe"

// Version is the version of the format this package writes; it reads
// this one and every one before it. Version 2 added the V2 flag on RESULT
// frames (a result whose pointers are those of its v2 record), which a
// version 1 reader would ignore and misread.
const Version = 2

// Sizes of the fixed parts.
const (
	HeaderSize      = 12 // magic (8), version (2), reserved (2)
	FrameHeaderSize = 20 // kind (1), flags (1), reserved (2), length (4), seconds (8), nanoseconds (4)
)

// Limits on payload lengths. A frame that claims more is damage, and the
// reader fails before allocating for it.
const (
	MaxPayload      = format.MaxRecord // any frame
	MaxErrorMessage = 1 << 16          // ERROR frames
)

// FrameKind is the first byte of a frame header. Kinds 0x01 to 0x07 carry
// records and are numbered as stream.Kind.
type FrameKind uint8

// Frame kinds. Kinds below 0x80 that a reader does not know are an error;
// kinds from 0x80 on are optional and a reader that does not know one
// skips it.
const (
	FrameLabel    FrameKind = 0x01
	FrameDesc     FrameKind = 0x02
	FrameInDom    FrameKind = 0x03
	FrameLabelSet FrameKind = 0x04
	FrameText     FrameKind = 0x05
	FrameResult   FrameKind = 0x06
	FrameMark     FrameKind = 0x07
	FrameError    FrameKind = 0x7e
	FrameEnd      FrameKind = 0x7f

	// FrameOptional is the lowest kind a reader may skip.
	FrameOptional FrameKind = 0x80

	// FrameMetadata is optional: the whole metadata of the archive whose
	// LABEL follows it, sent up front by a producer that has it (an
	// archive reader loads the whole .meta on open), so that a consumer
	// that needs it all before the first record (pcprewrite's rules)
	// need not spill the stream. Its payload is a sequence of DESC,
	// INDOM, LABELSET and TEXT frames. A reader that does not know it
	// skips it.
	FrameMetadata FrameKind = 0x80
)

var frameNames = map[FrameKind]string{
	FrameLabel: "LABEL", FrameDesc: "DESC", FrameInDom: "INDOM", FrameLabelSet: "LABELSET",
	FrameText: "TEXT", FrameResult: "RESULT", FrameMark: "MARK", FrameError: "ERROR", FrameEnd: "END",
	FrameMetadata: "METADATA",
}

// flipped reports whether k is a kind that is never assigned: one of the
// required kinds (LABEL to MARK, ERROR, END) with its top bit set. A
// reader that skipped it as optional would drop, without a word, a record
// whose frame header lost to one flipped bit (hostile campaign, F19's
// kin); it refuses it instead (docs/stream.md, "Unknown kinds").
func (k FrameKind) flipped() bool {
	b := k &^ FrameOptional
	return k >= FrameOptional && (b >= FrameLabel && b <= FrameMark || b == FrameError || b == FrameEnd)
}

func (k FrameKind) String() string {
	if s, ok := frameNames[k]; ok {
		return s
	}
	return "kind 0x" + string("0123456789abcdef"[k>>4]) + string("0123456789abcdef"[k&0xf])
}

// FlagV2 in a frame header says that the record came from a version 2
// archive: a LABEL of version 2, an INDOM of encoding stream.InDomV2, a
// LABELSET with V2 set, and (from stream version 2) a RESULT whose value
// pointers are those of its v2 record, one word smaller than in v3. The
// payload is otherwise the v3 encoding.
const FlagV2 uint8 = 0x01

// IsPipeStream reports whether peek, the first bytes of an input, starts a
// pipe stream. It needs at least len(Magic) bytes.
func IsPipeStream(peek []byte) bool {
	return len(peek) >= len(Magic) && string(peek[:len(Magic)]) == Magic
}

// NotAStream says what the input whose first bytes are peek (not a pipe
// stream: IsPipeStream is false) is instead, for the message that refuses
// it: the offset, a PCP archive file named as such (its label's magic,
// PM_LOG_MAGIC with version 2 or 3), or else the bytes found.
func NotAStream(peek []byte) string {
	if len(peek) >= 8 {
		if m := binary.BigEndian.Uint32(peek[4:8]); m == 0x50052602 || m == 0x50052603 {
			return fmt.Sprintf("offset 4: the magic number of a PCP archive file (version %d), not a pcp* stream: name the archive as an argument instead", m&0xff)
		}
	}
	return fmt.Sprintf("offset 0: not a pcp* stream: it starts with %q where a stream starts with %q (name archives as arguments instead)", peek[:min(len(peek), len(Magic))], Magic)
}

// IsTerminal reports whether f is a terminal, where tools refuse to write
// a binary stream (and where no stream can be read from). /dev/null is a
// character device too, but not a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return isTTY(f)
}

// UpstreamError is the failure a producer reported in an ERROR frame. Its
// message is the producer's, so `pcpcat bad | pcpextract -o out` fails
// with what pcpcat found wrong with bad.
type UpstreamError struct {
	Msg string
}

func (e *UpstreamError) Error() string { return "upstream: " + e.Msg }

// cleanMessage makes an error message safe to print on a terminal: valid
// UTF-8, no control characters but newline and tab.
func cleanMessage(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if strings.IndexFunc(s, badRune) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if badRune(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func badRune(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }

// truncateMessage cuts s to at most n bytes, on a rune boundary.
func truncateMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "..."
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
