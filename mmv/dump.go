package mmv

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// Dump writes what PCP's mmvdump prints for the MMV file named name whose
// bytes are data, and returns mmvdump's exit status (0, or 1 when the file
// is damaged). Where mmvdump would read past its mapping (offsets whose
// sum overflows, strings that run off the end) Dump stops at the end of
// the file instead and reports the damage as mmvdump's nearest message.
// now gives the time an elapsed timer still running is measured to.
func Dump(w io.Writer, name string, data []byte, now time.Time) int {
	bw := bufio.NewWriter(w)
	d := dumper{w: bw, b: buf(data), now: now}
	sts := d.dump(name)
	bw.Flush()
	return sts
}

type dumper struct {
	w       *bufio.Writer
	b       buf
	version int32
	now     time.Time
}

func (d *dumper) p(format string, a ...any) { fmt.Fprintf(d.w, format, a...) }

// text is mmvdump's copy of a string slot into a 256-byte buffer.
func (d *dumper) text(off uint64) string { return d.b.cstr(off, stringSize-1) }

func (d *dumper) dump(name string) int {
	b := d.b
	if len(b) < headerSize {
		d.p("Bad file size: too small for a header\n")
		return 1
	}
	if string(b[:4]) != "MMV\x00" {
		d.p("Bad magic: %c%c%c\n", b[0], b[1], b[2])
		return 1
	}
	d.version = b.i32(4)
	if d.version < 1 || d.version > 3 {
		d.p("Version %d not supported\n", d.version)
		return 1
	}
	g1, g2 := b.u64(8), b.u64(16)
	tocs, flags, process, cluster := b.i32(24), b.u32(28), b.i32(32), b.i32(36)
	d.p("MMV file   = %s\n", name)
	d.p("Version    = %d\n", d.version)
	d.p("Generated  = %d\n", g1)
	if g1 != g2 {
		d.p("Generated2 = %d\n", g2)
		d.p("Mismatched generation numbers (%d/%d)\n", g1, g2)
		return 1
	}
	d.p("TOC count  = %d\n", uint32(tocs))
	if tocs < 2 {
		d.p("Bad tocs: invalid table of contents count (%d)\n", tocs)
		return 1
	}
	d.p("Cluster    = %d\n", uint32(cluster))
	if cluster < 0 || cluster > 1<<12-1 {
		d.p("Bad cluster: %d is not a valid cluster ID\n", cluster)
		return 1
	}
	d.p("Process    = %d\n", process)
	d.p("Flags      = 0x%x (%s)\n", flags, flagString(flags))
	if !b.has(headerSize, uint64(tocs)*tocSize) {
		d.p("Bad file size: too small for %d TOC entries\n", tocs)
		return 1
	}
	sts := 0
	for i := int32(0); i < tocs; i++ {
		base := uint64(headerSize) + uint64(i)*tocSize
		typ, count, offset := b.u32(base), b.i32(base+4), b.u64(base+8)
		if count == 0 {
			d.p("Bad TOC[%d]: invalid entry count %d\n", i, uint32(count))
			continue
		}
		bad := false
		switch typ {
		case TOCIndoms:
			bad = d.indoms(i, base, offset, count)
		case TOCInstances:
			bad = d.instances(i, base, offset, count)
		case TOCValues:
			bad = d.values(i, base, offset, count)
		case TOCMetrics:
			bad = d.metrics(i, base, offset, count)
		case TOCStrings:
			bad = d.strings(i, base, offset, count)
		case TOCLabels:
			bad = d.labels(i, base, offset, count)
		default:
			d.p("Unrecognised TOC[%d] type: 0x%x\n", i, typ)
			bad = true
		}
		if bad {
			sts = 1
		}
	}
	return sts
}

// flagString is mmvdump's rendering of the header flags.
func flagString(flags uint32) string {
	if flags == 0 {
		return "none"
	}
	var s strings.Builder
	for _, f := range []struct {
		bit  uint32
		name string
	}{{FlagNoPrefix, "noprefix, "}, {FlagProcess, "process, "}, {FlagSentinel, "sentinel, "}} {
		if flags&f.bit != 0 {
			s.WriteString(f.name)
		}
	}
	if rest := flags &^ (FlagNoPrefix | FlagProcess | FlagSentinel); rest != 0 {
		fmt.Fprintf(&s, "unknown=%x", rest)
		return s.String()
	}
	out := s.String()
	if i := strings.LastIndexByte(out, ','); i >= 0 {
		out = out[:i]
	}
	return out
}

// helpTexts prints the shorttext and helptext lines of an indom or metric
// whose two string offsets are at off and off+8; what names the entry in
// mmvdump's messages.
func (d *dumper) helpTexts(off uint64, what string) bool {
	for _, t := range []struct{ label, msg string }{{"shorttext", "oneline"}, {"helptext", "help"}} {
		s := d.b.u64(off)
		off += 8
		if s == 0 {
			d.p("       (no %s)\n", t.label)
			continue
		}
		if !d.b.has(s, stringSize) {
			d.p("Bad file size: too small for %s %s\n", what, t.msg)
			return true
		}
		d.p("       %s=%s\n", t.label, d.text(s))
	}
	return false
}

func (d *dumper) indoms(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: offset %d, indoms offset %d (%d entries)\n", idx, base, offset, count)
	for i := int32(0); i < count; i++ {
		off := offset + uint64(i)*indomSize
		if !d.b.has(off, indomSize) {
			d.p("Bad file size: too small for toc[%d] indom[%d]\n", idx, i)
			return true
		}
		d.p("  [%d/%d] %d instances, starting at offset %d\n",
			d.b.u32(off), int64(off), d.b.i32(off+4), d.b.i64(off+8))
		if d.helpTexts(off+16, fmt.Sprintf("toc[%d] indom[%d]", idx, i)) {
			return true
		}
	}
	return false
}

func (d *dumper) instances(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: offset %d, instances offset %d (%d entries)\n", idx, base, int64(offset), count)
	stride := uint64(instance2Size)
	if d.version == 1 {
		stride = instance1Size
	}
	for i := int32(0); i < count; i++ {
		off := offset + uint64(i)*stride
		if !d.b.has(off, stride) {
			d.p("\nBad file size: too small for toc[%d] inst[%d]\n", idx, i)
			return true
		}
		ind := d.b.u64(off)
		if !d.b.has(ind, indomSize) {
			if d.version == 1 {
				d.p("\nBad file size: too small for toc[%d] indom[%d]\n", idx, i)
			} else {
				d.p("\nBad file size: too small for toc[%d] inst[%d] indom\n", idx, i)
			}
			return true
		}
		ext, ok := d.external(off,
			fmt.Sprintf("\nBad file size: too small for toc[%d] inst[%d] name\n", idx, i),
			fmt.Sprintf("\nBad file: invalid offset for toc[%d] inst[%d] name\n", idx, i))
		if !ok {
			return true
		}
		// mmvdump steps the printed offset by the v1 instance size in
		// every version.
		d.p("  [%d/%d] instance = [%d or \"%s\"]\n", d.b.u32(ind),
			int64(offset+uint64(i)*instance1Size), d.b.i32(off+12), ext)
	}
	return false
}

// metricName returns the name of the metric at off (a v2 name is checked
// as mmvdump checks it; tag names the entry in its messages).
func (d *dumper) metricName(off uint64, idx, i int32, tag string) (string, bool) {
	if d.version == 1 {
		return d.b.cstr(off, 0), true
	}
	s := d.b.u64(off)
	if !d.b.has(s, stringSize) {
		d.p("Bad file size: too small for toc[%d] %s[%d] %sname\n", idx, tag, i, tagPrefix(tag))
		return "", false
	} else if s == 0 {
		d.p("Bad file: invalid offset for toc[%d] %s[%d] %sname\n", idx, tag, i, tagPrefix(tag))
		return "", false
	}
	return d.text(s), true
}

func tagPrefix(tag string) string {
	if tag == "value" {
		return "m"
	}
	return ""
}

// metricLayout returns a metric entry's size and the offsets of its item,
// type, semantics, units, indom, padding and help fields.
func metricLayout(version int32) (size, item uint64) {
	if version == 1 {
		return metric1Size, nameMax
	}
	return metric2Size, 8
}

func (d *dumper) metrics(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: toc offset %d, metrics offset %d (%d entries)\n", idx, base, int64(offset), count)
	size, item := metricLayout(d.version)
	for i := int32(0); i < count; i++ {
		off := offset + uint64(i)*size
		if !d.b.has(off, size) {
			d.p("Bad file size: too small for toc[%d] metric[%d]\n", idx, i)
			return true
		}
		name, ok := d.metricName(off, idx, i, "metric")
		if !ok {
			return true
		}
		f := off + item
		typ, sem := d.b.u32(f+4), d.b.u32(f+8)
		d.p("  [%d/%d] %s\n", d.b.u32(f), int64(off), name)
		d.p("       type=%s (0x%x), sem=%s (0x%x), pad=0x%x\n",
			typeName(typ), typ, semName(sem), sem, d.b.u32(f+20))
		d.p("       units=%s\n", stream.Units(d.b.u32(f+12)).String())
		if ind := d.b.i32(f + 16); ind != inNull && ind != 0 {
			d.p("       indom=%d\n", ind)
		} else {
			d.p("       (no indom)\n")
		}
		if d.helpTexts(f+24, fmt.Sprintf("toc[%d] metric[%d]", idx, i)) {
			return true
		}
	}
	return false
}

func typeName(t uint32) string {
	switch t {
	case TypeI32:
		return "32-bit int"
	case TypeU32:
		return "32-bit unsigned int"
	case TypeI64:
		return "64-bit int"
	case TypeU64:
		return "64-bit unsigned int"
	case TypeFloat:
		return "float"
	case TypeDouble:
		return "double"
	case TypeString:
		return "string"
	case TypeElapsed:
		return "elapsed"
	}
	return "?"
}

func semName(s uint32) string {
	switch s {
	case 1:
		return "counter"
	case 3:
		return "instant"
	case 4:
		return "discrete"
	}
	return "?"
}

func (d *dumper) values(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: offset %d, values offset %d (%d entries)\n", idx, base, offset, count)
	msize, item := metricLayout(d.version)
	for i := int32(0); i < count; i++ {
		off := offset + uint64(i)*valueSize
		if !d.b.has(off, valueSize) {
			d.p("Bad file size: too small for toc[%d] value[%d]\n", idx, i)
			return true
		}
		moff := d.b.u64(off + 16)
		if !d.b.has(moff, msize) {
			d.p("Bad file size: toc[%d] value[%d] metric offset\n", idx, i)
			return true
		}
		name, ok := d.metricName(moff, idx, i, "value")
		if !ok {
			return true
		}
		f := moff + item
		d.p("  [%d/%d] %s", d.b.u32(f), off, name)
		if ind := d.b.i32(f + 16); ind != 0 && ind != inNull {
			if !d.instanceName(off, idx, i) {
				return true
			}
		}
		d.value(off, idx, i, d.b.u32(f+4))
	}
	return false
}

// instanceName prints the "[internal or "external"]" part of a value line.
func (d *dumper) instanceName(off uint64, idx, i int32) bool {
	ioff := d.b.u64(off + 24)
	isize := uint64(instance2Size)
	if d.version == 1 {
		isize = instance1Size
	}
	if !d.b.has(ioff, isize) {
		d.p("\nBad file size: toc[%d] value[%d] inst offset\n", idx, i)
		return false
	}
	ext, ok := d.external(ioff,
		fmt.Sprintf("Bad file size: too small for toc[%d] value[%d] iname\n", idx, i),
		fmt.Sprintf("Bad file: invalid offset for toc[%d] metric[%d] iname\n", idx, i))
	if !ok {
		return false
	}
	d.p("[%d or \"%s\"]", d.b.i32(ioff+12), ext)
	return true
}

// external returns the external name of the instance entry at off: in
// place in v1, a string slot in v2 and v3, checked as mmvdump checks it
// (printing tooSmall or invalid when the check fails).
func (d *dumper) external(off uint64, tooSmall, invalid string) (string, bool) {
	if d.version == 1 {
		return d.b.cstr(off+16, 0), true
	}
	s := d.b.u64(off + 16)
	if !d.b.has(s, stringSize) {
		d.w.WriteString(tooSmall)
		return "", false
	} else if s == 0 {
		d.w.WriteString(invalid)
		return "", false
	}
	return d.text(s), true
}

// cfloat formats as C's %f does.
func cfloat(v float64) string {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

func (d *dumper) value(off uint64, idx, i int32, typ uint32) {
	b := d.b
	switch typ {
	case TypeI32:
		d.p(" = %d", b.i32(off))
	case TypeU32:
		d.p(" = %d", b.u32(off))
	case TypeI64:
		d.p(" = %d", b.i64(off))
	case TypeU64:
		d.p(" = %d", b.u64(off))
	case TypeFloat:
		d.p(" = %s", cfloat(float64(b.f32(off))))
	case TypeDouble:
		d.p(" = %s", cfloat(b.f64(off)))
	case TypeString:
		s := b.u64(off + 8)
		if !b.has(s, stringSize) {
			d.p(" = ?\n")
			d.p("Bad file size: toc[%d] str value[%d] extra\n", idx, i)
			return
		}
		d.p(" = \"%s\"", b.cstr(s, 0))
	case TypeElapsed:
		v, extra := b.i64(off), b.i64(off+8)
		d.p(" = %d (value=%d/extra=%d)", elapsed(v, extra, d.now), v, extra)
		if extra > 0 {
			d.p("\nBad (positive) ELAPSED 'extra' value found!")
		}
	default:
		d.p("Unknown type %d", int32(typ))
	}
	d.w.WriteByte('\n')
}

// elapsed is an elapsed timer's value at now: a timer in progress (extra
// is minus its start time in microseconds) adds the time since it started.
func elapsed(v, extra int64, now time.Time) int64 {
	if extra >= 0 {
		return v
	}
	us := float64(now.Unix())*1e6 + float64(now.Nanosecond()/1000)
	return int64(float64(v) + (us + float64(extra)))
}

func (d *dumper) strings(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: offset %d, string offset %d (%d entries)\n", idx, base, offset, count)
	for i := int32(0); i < count; i++ {
		// mmvdump checks each slot at the value stride but prints it
		// at the string stride; we check both.
		soff := offset + uint64(i)*stringSize
		if !d.b.has(offset+uint64(i)*valueSize, stringSize) || !d.b.has(soff, stringSize) {
			d.p("Bad file size: toc[%d] string[%d]\n", idx, i)
			return true
		}
		d.p("  [%d/%d] %s\n", i+1, soff, d.b.cstr(soff, 0))
	}
	return false
}

func (d *dumper) labels(idx int32, base, offset uint64, count int32) bool {
	d.p("\nTOC[%d]: offset %d, labels offset %d (%d entries)\n", idx, base, int64(offset), count)
	for i := int32(0); i < count; i++ {
		off := offset + uint64(i)*labelSize
		if !d.b.has(off, labelSize) {
			d.p("Bad file size: too small for toc[%d] metric[%d]\n", idx, i)
			return true
		}
		d.p("  [%d/%d] %s\n", i+1, off, d.b.cstr(off+12, 0))
		d.p("        flags=0x%x, identity=0x%x\n", d.b.u32(off), d.b.u32(off+4))
		d.p("        internal=0x%x\n", d.b.u32(off+8))
	}
	return false
}
