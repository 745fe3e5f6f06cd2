// Package format encodes and decodes PCP archive files (LOGARCHIVE(5),
// versions 2 and 3): the label at the head of each file, the metadata
// records of the .meta file, the data records of the volumes and the
// temporal index. On top of the codec it provides the archive Reader, which
// turns the files of an archive into a stream.Iterator, the Writer, which
// turns a stream back into files with a rebuilt index, and Check, the
// integrity checks pmlogcheck makes.
//
// Every record on disk is framed as [len:4][payload][len:4], big-endian, with
// len counting both length words. Where LOGARCHIVE(5) and PCP's code
// disagree, the code wins:
//   - v3 64-bit seconds are two big-endian 32-bit words, low word first;
//     index byte offsets are plain big-endian 64-bit;
//   - a label-set record carries each set's JSON inline (inst, jsonlen, json,
//     nlabels, labels), not one shared string table;
//   - a desc record's name count follows the 20-byte pmDesc (offset 24 after
//     the length word).
//
// Decoders never trust a length field: each count is checked against the
// bytes actually left before anything is allocated.
package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pcptools/pcptools/stream"
)

// Magic numbers and record types.
const (
	MagicBase = 0x50052600

	TypeDesc       = 1
	TypeInDomV2    = 2
	TypeLabelV2    = 3
	TypeText       = 4
	TypeInDom      = 5
	TypeInDomDelta = 6
	TypeLabel      = 7

	LabelSizeV2 = 132 // whole record, with both length words
	LabelSizeV3 = 808

	// FeatureQA is the only v3 feature bit PCP defines.
	FeatureQA = 1 << 31

	hostLenV2 = 64
	tzLenV2   = 40
	strLenV3  = 256

	// MaxRecord bounds a single record; PCP's own limit for a pmResult
	// PDU is far below this, and anything larger is damage.
	MaxRecord = 1 << 30
)

// LabelSize returns the size of the label record for a version.
func LabelSize(version int) int {
	if version == 3 {
		return LabelSizeV3
	}
	return LabelSizeV2
}

// IndexEntrySize returns the size of a temporal index entry.
func IndexEntrySize(version int) int {
	if version == 3 {
		return 32
	}
	return 20
}

// FormatError reports damage in a file, with the byte offset at which it
// was found.
type FormatError struct {
	File   string
	Offset int64
	Msg    string
	Err    error // underlying cause, if any
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// recError is an error at an offset within one record; callers that know
// the file and the record's position turn it into a FormatError.
type recError struct {
	off int
	msg string
}

func (e *recError) Error() string { return fmt.Sprintf("record offset %d: %s", e.off, e.msg) }

// AtFile turns an error from a record decoder into a FormatError for a
// record that starts at recOff in file.
func AtFile(err error, file string, recOff int64) error {
	if err == nil {
		return nil
	}
	var re *recError
	if errors.As(err, &re) {
		return &FormatError{File: file, Offset: recOff + int64(re.off), Msg: re.msg}
	}
	var be *stream.BodyError
	if errors.As(err, &be) {
		return &FormatError{File: file, Offset: recOff, Msg: "data record: " + be.Error()}
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return &FormatError{File: file, Offset: recOff, Msg: err.Error()}
}

// decbuf decodes big-endian fields with a sticky error (see Prometheus'
// encoding.Decbuf): callers check Err once after a run of reads.
type decbuf struct {
	b   []byte
	off int // offset of b[0] within the record, for messages
	pos int
	err error
}

func (d *decbuf) fail(msg string) {
	if d.err == nil {
		d.err = &recError{d.off + d.pos, msg}
	}
}

// failAt is fail for a field that began at pos.
func (d *decbuf) failAt(pos int, msg string) {
	if d.err == nil {
		d.err = &recError{d.off + pos, msg}
	}
}

func (d *decbuf) left() int { return len(d.b) - d.pos }

func (d *decbuf) u32(what string) uint32 {
	if d.err != nil {
		return 0
	}
	if d.left() < 4 {
		d.fail("record too short for " + what)
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.pos:])
	d.pos += 4
	return v
}

func (d *decbuf) i32(what string) int32 { return int32(d.u32(what)) }

func (d *decbuf) bytes(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.left() {
		d.fail(fmt.Sprintf("%s of %d bytes runs past the end of the record (%d bytes left)", what, n, d.left()))
		return nil
	}
	v := d.b[d.pos : d.pos+n]
	d.pos += n
	return v
}

// stamp reads a v2 (sec, usec) or v3 (sec low word, high word, nsec)
// timestamp.
func (d *decbuf) stamp(version int) stream.Timestamp {
	if version == 3 {
		lo := d.u32("timestamp")
		hi := d.u32("timestamp")
		ns := d.i32("timestamp")
		return stream.Timestamp{Sec: int64(uint64(hi)<<32 | uint64(lo)), Nsec: ns}
	}
	s := d.i32("timestamp")
	at := d.pos
	us := d.i32("timestamp")
	if us > math.MaxInt32/1000 || us < math.MinInt32/1000 {
		// A microseconds field out of range is kept (PCP reads it as it
		// comes; the reader warns about a data record's), but one whose
		// nanoseconds do not fit 32 bits cannot be carried: it would be
		// written back as another time.
		d.failAt(at, fmt.Sprintf("timestamp's microseconds field is %d, far outside 0 to 999999", us))
		us = 0
	}
	return stream.Timestamp{Sec: int64(s), Nsec: us * 1000}
}

// DecodeTimestamp reads a timestamp of the given version at b[0:].
func DecodeTimestamp(b []byte, version int) stream.Timestamp {
	d := decbuf{b: b}
	return d.stamp(version)
}

func appendU32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// AppendTimestamp appends t in the encoding of version (v2 truncates to
// microseconds).
func AppendTimestamp(dst []byte, t stream.Timestamp, version int) []byte {
	if version == 3 {
		dst = appendU32(dst, uint32(uint64(t.Sec)))
		dst = appendU32(dst, uint32(uint64(t.Sec)>>32))
		return appendU32(dst, uint32(t.Nsec))
	}
	dst = appendU32(dst, uint32(int32(t.Sec)))
	return appendU32(dst, uint32(t.Nsec/1000))
}

// secFitsV2 reports whether t's seconds fit v2's 32-bit field (the
// sub-microsecond part is truncated; callers that care check
// Timestamp.FitsV2 first).
func secFitsV2(t stream.Timestamp) bool { return t.Sec >= math.MinInt32 && t.Sec <= math.MaxInt32 }

// TimestampSize returns the encoded size of a timestamp.
func TimestampSize(version int) int {
	if version == 3 {
		return 12
	}
	return 8
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// DecodeLabel decodes a whole label record (both length words included).
func DecodeLabel(b []byte) (stream.Label, error) {
	var l stream.Label
	if len(b) < 8 {
		return l, &recError{0, fmt.Sprintf("file too short for a label (%d bytes)", len(b))}
	}
	n := binary.BigEndian.Uint32(b)
	magic := binary.BigEndian.Uint32(b[4:])
	if magic&0xffffff00 != MagicBase {
		return l, &recError{4, fmt.Sprintf("bad magic number 0x%08x, not a PCP archive file", magic)}
	}
	version := int(magic & 0xff)
	if version != 2 && version != 3 {
		return l, &recError{4, fmt.Sprintf("unsupported archive version %d", version)}
	}
	size := LabelSize(version)
	if int(n) != size {
		return l, &recError{0, fmt.Sprintf("label length %d, expected %d for a v%d label", n, size, version)}
	}
	if len(b) < size {
		return l, &recError{len(b), fmt.Sprintf("label truncated: %d of %d bytes", len(b), size)}
	}
	if t := binary.BigEndian.Uint32(b[size-4:]); t != n {
		return l, &recError{size - 4, fmt.Sprintf("label trailer length %d does not match header %d", t, n)}
	}
	d := decbuf{b: b[:size-4], pos: 8}
	l.Version = version
	l.PID = d.i32("pid")
	l.Start = d.stamp(version)
	l.Vol = d.i32("volume")
	if version == 3 {
		l.Features = d.u32("features")
		d.u32("reserved")
		l.Hostname = cstring(d.bytes(strLenV3, "hostname"))
		l.Timezone = cstring(d.bytes(strLenV3, "timezone"))
		l.Zoneinfo = cstring(d.bytes(strLenV3, "zoneinfo"))
	} else {
		l.Hostname = cstring(d.bytes(hostLenV2, "hostname"))
		l.Timezone = cstring(d.bytes(tzLenV2, "timezone"))
	}
	return l, d.err
}

func appendPadded(dst []byte, s string, n int) []byte {
	if len(s) > n-1 {
		s = s[:n-1]
	}
	dst = append(dst, s...)
	for i := len(s); i < n; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// AppendLabel appends a label record of the given version for volume vol.
func AppendLabel(dst []byte, l *stream.Label, version int, vol int32) []byte {
	size := LabelSize(version)
	dst = appendU32(dst, uint32(size))
	dst = appendU32(dst, uint32(MagicBase|version))
	dst = appendU32(dst, uint32(l.PID))
	dst = AppendTimestamp(dst, l.Start, version)
	dst = appendU32(dst, uint32(vol))
	if version == 3 {
		dst = appendU32(dst, l.Features)
		dst = appendU32(dst, 0)
		dst = appendPadded(dst, l.Hostname, strLenV3)
		dst = appendPadded(dst, l.Timezone, strLenV3)
		dst = appendPadded(dst, l.Zoneinfo, strLenV3)
	} else {
		dst = appendPadded(dst, l.Hostname, hostLenV2)
		dst = appendPadded(dst, l.Timezone, tzLenV2)
	}
	return appendU32(dst, uint32(size))
}

// MetaVersionOK reports whether a metadata record type may appear in an
// archive of the given version (pmlogcheck treats a mix as fatal).
func MetaVersionOK(typ uint32, version int) bool {
	switch typ {
	case TypeDesc, TypeText:
		return true
	case TypeInDomV2, TypeLabelV2:
		return version == 2
	case TypeInDom, TypeInDomDelta, TypeLabel:
		return version == 3
	}
	return false
}

// DecodeMeta decodes one metadata record. rec is the whole record with
// both length words; the returned record is freshly allocated and owns its
// memory. Desc and Text records get a zero timestamp: the reader gives them
// the time of the record before.
func DecodeMeta(rec []byte) (stream.Record, error) {
	if len(rec) < 12 {
		return nil, &recError{0, fmt.Sprintf("metadata record of %d bytes is too short", len(rec))}
	}
	typ := binary.BigEndian.Uint32(rec[4:])
	d := decbuf{b: rec[:len(rec)-4], pos: 8}
	switch typ {
	case TypeDesc:
		return decodeDesc(&d)
	case TypeInDomV2, TypeInDom, TypeInDomDelta:
		return decodeInDom(&d, typ)
	case TypeLabelV2, TypeLabel:
		return decodeLabelSet(&d, typ)
	case TypeText:
		return decodeText(&d)
	}
	return nil, &recError{4, fmt.Sprintf("unknown metadata record type %d", typ)}
}

func decodeDesc(d *decbuf) (*stream.Desc, error) {
	r := &stream.Desc{}
	r.PMID = stream.PMID(d.u32("pmid"))
	r.Type = stream.Type(d.i32("type"))
	r.InDom = stream.InDomID(d.u32("indom"))
	r.Sem = stream.Sem(d.i32("semantics"))
	r.Units = stream.Units(d.u32("units"))
	n := d.i32("number of names")
	if d.err != nil {
		return nil, d.err
	}
	// each name needs at least its 4-byte length
	if n < 0 || int(n) > d.left()/4 {
		d.fail(fmt.Sprintf("descriptor for %s claims %d names in %d bytes", r.PMID, n, d.left()))
		return nil, d.err
	}
	r.Names = make([]string, 0, n)
	for i := 0; i < int(n); i++ {
		l := d.i32("name length")
		b := d.bytes(int(l), "metric name")
		if d.err != nil {
			return nil, d.err
		}
		r.Names = append(r.Names, string(b))
	}
	if d.left() != 0 && d.err == nil {
		d.fail(fmt.Sprintf("%d unexpected bytes after the descriptor of %s", d.left(), r.PMID))
	}
	return r, d.err
}

func decodeInDom(d *decbuf, typ uint32) (*stream.InDom, error) {
	r := &stream.InDom{Encoding: stream.InDomEncoding(typ)}
	version := 3
	if typ == TypeInDomV2 {
		version = 2
	}
	r.T = d.stamp(version)
	r.InDom = stream.InDomID(d.u32("indom"))
	n := d.i32("number of instances")
	if d.err != nil {
		return nil, d.err
	}
	if n < 0 || int64(n)*8 > int64(d.left()) {
		d.fail(fmt.Sprintf("instance domain %s claims %d instances in %d bytes", r.InDom, n, d.left()))
		return nil, d.err
	}
	insts := d.bytes(int(n)*4, "instance list")
	idx := d.bytes(int(n)*4, "name index")
	strOff := d.off + d.pos
	strs := d.b[d.pos:]
	r.Insts = make([]int32, n)
	r.Names = make([]string, n)
	if typ == TypeInDomDelta {
		r.Deleted = make([]bool, n)
	}
	for i := 0; i < int(n); i++ {
		r.Insts[i] = int32(binary.BigEndian.Uint32(insts[4*i:]))
		s := int32(binary.BigEndian.Uint32(idx[4*i:]))
		if s < 0 {
			if typ != TypeInDomDelta {
				return nil, &recError{d.off + d.pos - 4*int(n) + 4*i, fmt.Sprintf("instance domain %s: instance %d has no name", r.InDom, r.Insts[i])}
			}
			r.Deleted[i] = true
			continue
		}
		if int(s) >= len(strs) {
			return nil, &recError{strOff, fmt.Sprintf("instance domain %s: name offset %d of instance %d beyond the %d-byte string table", r.InDom, s, r.Insts[i], len(strs))}
		}
		r.Names[i] = cstring(strs[s:])
	}
	return r, nil
}

func decodeLabelSet(d *decbuf, typ uint32) (*stream.LabelSet, error) {
	r := &stream.LabelSet{V2: typ == TypeLabelV2}
	version := 3
	if r.V2 {
		version = 2
	}
	r.T = d.stamp(version)
	r.Type = d.u32("label type")
	r.Ident = d.u32("label ident")
	n := d.i32("number of label sets")
	if d.err != nil {
		return nil, d.err
	}
	// each set needs at least inst, jsonlen and nlabels
	if n < 0 || int64(n)*12 > int64(d.left()) {
		d.fail(fmt.Sprintf("label record claims %d sets in %d bytes", n, d.left()))
		return nil, d.err
	}
	r.Sets = make([]stream.OneLabelSet, n)
	for i := range r.Sets {
		s := &r.Sets[i]
		s.Inst = d.i32("instance")
		jl := d.i32("json length")
		s.JSON = string(d.bytes(int(jl), "label JSON"))
		s.NLabels = d.i32("number of labels")
		if d.err != nil {
			return nil, d.err
		}
		if s.NLabels > 0 {
			if int64(s.NLabels)*8 > int64(d.left()) {
				d.fail(fmt.Sprintf("label set claims %d labels in %d bytes", s.NLabels, d.left()))
				return nil, d.err
			}
			s.Labels = make([]stream.LabelEntry, s.NLabels)
			for j := range s.Labels {
				b := d.bytes(8, "label")
				s.Labels[j] = stream.LabelEntry{
					Name:     binary.BigEndian.Uint16(b),
					NameLen:  b[2],
					Flags:    b[3],
					Value:    binary.BigEndian.Uint16(b[4:]),
					ValueLen: binary.BigEndian.Uint16(b[6:]),
				}
			}
		}
	}
	if d.err == nil && d.left() != 0 {
		d.fail(fmt.Sprintf("%d unexpected bytes after the label sets", d.left()))
	}
	return r, d.err
}

func decodeText(d *decbuf) (*stream.Text, error) {
	r := &stream.Text{}
	r.Type = d.u32("text type")
	r.Ident = d.u32("text ident")
	if d.err != nil {
		return nil, d.err
	}
	r.Text = cstring(d.b[d.pos:])
	return r, nil
}

func frame(dst []byte, start int) []byte {
	n := uint32(len(dst) - start + 4)
	binary.BigEndian.PutUint32(dst[start:], n)
	return appendU32(dst, n)
}

// AppendMeta appends the metadata record rec encoded for an archive of
// the given version. Instance domains and label sets take the encoding of
// the version (a v2 indom becomes a full v3 indom and vice versa); a delta
// indom cannot be written to a v2 archive.
func AppendMeta(dst []byte, rec stream.Record, version int) ([]byte, error) {
	start := len(dst)
	dst = appendU32(dst, 0) // length, patched by frame
	switch r := rec.(type) {
	case *stream.Desc:
		dst = appendU32(dst, TypeDesc)
		dst = appendU32(dst, uint32(r.PMID))
		dst = appendU32(dst, uint32(r.Type))
		dst = appendU32(dst, uint32(r.InDom))
		dst = appendU32(dst, uint32(r.Sem))
		dst = appendU32(dst, uint32(r.Units))
		dst = appendU32(dst, uint32(len(r.Names)))
		for _, n := range r.Names {
			dst = appendU32(dst, uint32(len(n)))
			dst = append(dst, n...)
		}
	case *stream.InDom:
		typ := uint32(TypeInDomV2)
		if version == 3 {
			typ = TypeInDom
			if r.Encoding == stream.InDomDelta {
				typ = TypeInDomDelta
			}
		} else if r.Encoding == stream.InDomDelta {
			return dst[:start], fmt.Errorf("instance domain %s: a delta record cannot be written to a v2 archive", r.InDom)
		}
		if version == 2 && !secFitsV2(r.T) {
			return dst[:start], fmt.Errorf("instance domain %s: timestamp %s does not fit a v2 archive", r.InDom, r.T)
		}
		dst = appendU32(dst, typ)
		dst = AppendTimestamp(dst, r.T, version)
		dst = appendU32(dst, uint32(r.InDom))
		dst = appendU32(dst, uint32(len(r.Insts)))
		for _, v := range r.Insts {
			dst = appendU32(dst, uint32(v))
		}
		off := 0
		for i, n := range r.Names {
			if r.Deleted != nil && r.Deleted[i] {
				dst = appendU32(dst, math.MaxUint32)
				continue
			}
			dst = appendU32(dst, uint32(off))
			off += len(n) + 1
		}
		for i, n := range r.Names {
			if r.Deleted != nil && r.Deleted[i] {
				continue
			}
			dst = append(dst, n...)
			dst = append(dst, 0)
		}
	case *stream.LabelSet:
		typ := uint32(TypeLabelV2)
		if version == 3 {
			typ = TypeLabel
		}
		dst = appendU32(dst, typ)
		dst = AppendTimestamp(dst, r.T, version)
		dst = appendU32(dst, r.Type)
		dst = appendU32(dst, r.Ident)
		dst = appendU32(dst, uint32(len(r.Sets)))
		for _, s := range r.Sets {
			dst = appendU32(dst, uint32(s.Inst))
			dst = appendU32(dst, uint32(len(s.JSON)))
			dst = append(dst, s.JSON...)
			dst = appendU32(dst, uint32(s.NLabels))
			for _, l := range s.Labels {
				dst = binary.BigEndian.AppendUint16(dst, l.Name)
				dst = append(dst, l.NameLen, l.Flags)
				dst = binary.BigEndian.AppendUint16(dst, l.Value)
				dst = binary.BigEndian.AppendUint16(dst, l.ValueLen)
			}
		}
	case *stream.Text:
		dst = appendU32(dst, TypeText)
		dst = appendU32(dst, r.Type)
		dst = appendU32(dst, r.Ident)
		dst = append(dst, r.Text...)
		dst = append(dst, 0)
	default:
		return dst[:start], fmt.Errorf("%s is not a metadata record", rec.Kind())
	}
	return frame(dst, start), nil
}

// DataHeaderSize returns the bytes before numpmid in a data record: the
// length word and the timestamp.
func DataHeaderSize(version int) int { return 4 + TimestampSize(version) }

// DecodeData decodes a whole data record (both length words included) of
// an archive of the given version into r, or reports a mark. r.Body
// aliases rec.
func DecodeData(rec []byte, version int, r *stream.Result) (mark bool, err error) {
	h := DataHeaderSize(version)
	if len(rec) < h+8 {
		return false, &recError{0, fmt.Sprintf("data record of %d bytes is too short", len(rec))}
	}
	d := decbuf{b: rec, pos: 4}
	r.T = d.stamp(version)
	if d.err != nil {
		return false, d.err
	}
	r.Version = uint8(version)
	r.Body = rec[h : len(rec)-4]
	n := int32(binary.BigEndian.Uint32(r.Body))
	if n == 0 {
		if len(r.Body) != 4 {
			return true, &recError{h, fmt.Sprintf("mark record with %d extra bytes", len(r.Body)-4)}
		}
		return true, nil
	}
	if n < 0 {
		return false, &recError{h, fmt.Sprintf("negative numpmid %d", n)}
	}
	return false, nil
}

// AppendResult appends r as a data record of the given version.
func AppendResult(dst []byte, r *stream.Result, version int) ([]byte, error) {
	if version == 2 && !secFitsV2(r.T) {
		return dst, fmt.Errorf("result at %s: timestamp does not fit a v2 archive", r.T)
	}
	start := len(dst)
	dst = appendU32(dst, 0)
	dst = AppendTimestamp(dst, r.T, version)
	dst, err := r.AppendBody(dst, uint8(version))
	if err != nil {
		return dst[:start], err
	}
	return frame(dst, start), nil
}

// AppendMark appends a <mark> record at t.
func AppendMark(dst []byte, t stream.Timestamp, version int) []byte {
	start := len(dst)
	dst = appendU32(dst, 0)
	dst = AppendTimestamp(dst, t, version)
	dst = appendU32(dst, 0)
	return frame(dst, start)
}

// IndexEntry is one entry of the temporal index: at time T, volume Vol,
// the .meta and data files were MetaOff and DataOff bytes long.
type IndexEntry struct {
	T       stream.Timestamp
	Vol     int32
	MetaOff int64
	DataOff int64
}

// DecodeIndexEntry decodes one entry (IndexEntrySize(version) bytes).
func DecodeIndexEntry(b []byte, version int) IndexEntry {
	d := decbuf{b: b}
	var e IndexEntry
	e.T = d.stamp(version)
	e.Vol = d.i32("volume")
	if version == 3 {
		e.MetaOff = int64(binary.BigEndian.Uint64(b[16:]))
		e.DataOff = int64(binary.BigEndian.Uint64(b[24:]))
	} else {
		e.MetaOff = int64(d.u32("meta offset"))
		e.DataOff = int64(d.u32("data offset"))
	}
	return e
}

// AppendIndexEntry appends e encoded for version.
func AppendIndexEntry(dst []byte, e IndexEntry, version int) []byte {
	dst = AppendTimestamp(dst, e.T, version)
	dst = appendU32(dst, uint32(e.Vol))
	if version == 3 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.MetaOff))
		return binary.BigEndian.AppendUint64(dst, uint64(e.DataOff))
	}
	dst = appendU32(dst, uint32(e.MetaOff))
	return appendU32(dst, uint32(e.DataOff))
}
