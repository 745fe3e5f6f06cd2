// Package mmv reads PCP's memory-mapped value files (mmv(5), versions 1, 2
// and 3): the files that applications instrumented with libpcp_mmv, speed,
// parfait or hornet publish and pmdammv reads. Every offset and count in a
// file is checked against the file's size before it is followed.
package mmv

import (
	"encoding/binary"
	"math"
)

// Sizes of the on-disk structures (mmv_dev.h), in bytes.
const (
	headerSize    = 40
	tocSize       = 16
	indomSize     = 32
	instance1Size = 80
	instance2Size = 24
	metric1Size   = 104
	metric2Size   = 48
	valueSize     = 32
	stringSize    = 256
	labelSize     = 256
	nameMax       = 64
	labelMax      = 244
)

// Table of contents section types.
const (
	TOCIndoms    = 1
	TOCInstances = 2
	TOCMetrics   = 3
	TOCValues    = 4
	TOCStrings   = 5
	TOCLabels    = 6
)

// Header flags.
const (
	FlagNoPrefix = 0x1 // metric names are not prefixed by the file name
	FlagProcess  = 0x2 // values exist only while the writing process lives
	FlagSentinel = 0x4 // a sentinel value means "no value"
)

// Metric value types (PM_TYPE_* and the MMV elapsed type).
const (
	TypeI32     = 0
	TypeU32     = 1
	TypeI64     = 2
	TypeU64     = 3
	TypeFloat   = 4
	TypeDouble  = 5
	TypeString  = 6
	TypeElapsed = 9
)

// inNull is PM_IN_NULL and PM_INDOM_NULL as a 32-bit signed number.
const inNull = -1

var ne = binary.NativeEndian

// buf is a file's bytes with bounds-checked accessors. Each accessor
// reports false when the field does not lie wholly inside the file.
type buf []byte

// has reports whether n bytes from off lie inside the file, without
// overflowing.
func (b buf) has(off, n uint64) bool {
	size := uint64(len(b))
	return off <= size && n <= size-off
}

func (b buf) u32(off uint64) uint32 {
	if !b.has(off, 4) {
		return 0
	}
	return ne.Uint32(b[off:])
}

func (b buf) i32(off uint64) int32 { return int32(b.u32(off)) }

func (b buf) u64(off uint64) uint64 {
	if !b.has(off, 8) {
		return 0
	}
	return ne.Uint64(b[off:])
}

func (b buf) i64(off uint64) int64 { return int64(b.u64(off)) }

func (b buf) f32(off uint64) float32 { return math.Float32frombits(b.u32(off)) }

func (b buf) f64(off uint64) float64 { return math.Float64frombits(b.u64(off)) }

// cstr returns the NUL-terminated string at off, at most max bytes long
// (max <= 0: up to the end of the file), never reading past the file.
func (b buf) cstr(off uint64, max int) string {
	if off >= uint64(len(b)) {
		return ""
	}
	s := b[off:]
	if max > 0 && len(s) > max {
		s = s[:max]
	}
	for i, c := range s {
		if c == 0 {
			return string(s[:i])
		}
	}
	return string(s)
}
