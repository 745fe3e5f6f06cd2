package rules

import (
	"errors"
	"fmt"
	"math"

	"github.com/pcptools/pcptools/stream"
)

// Value conversions the engine applies to result values, as pmlogrewrite
// does them: scale changes with libpcp's pmConvScale, type changes with
// pmExtractValue, and the OUTPUT reductions of result.c (pick_val). They
// are pure functions; naming the metric, instance and time in an error is
// the caller's job.

// Errors of value conversion (PM_ERR_SIGN, PM_ERR_TRUNC, PM_ERR_CONV,
// PM_ERR_UNIT).
var (
	ErrSign  = errors.New("negative value in conversion to unsigned")
	ErrTrunc = errors.New("truncation in value conversion")
	ErrConv  = errors.New("impossible value or scale conversion")
	ErrUnit  = errors.New("illegal pmUnits specification")
)

// Num is one numeric value of a PCP type: I holds 32 and 64, U holds U32
// and U64, F holds FLOAT (a float32 value) and DOUBLE.
type Num struct {
	Type stream.Type
	I    int64
	U    uint64
	F    float64
}

// Int32, Uint32, ... build Nums.
func Int32(v int32) Num     { return Num{Type: stream.Type32, I: int64(v)} }
func Uint32(v uint32) Num   { return Num{Type: stream.TypeU32, U: uint64(v)} }
func Int64(v int64) Num     { return Num{Type: stream.Type64, I: v} }
func Uint64(v uint64) Num   { return Num{Type: stream.TypeU64, U: v} }
func Float32(v float32) Num { return Num{Type: stream.TypeFloat, F: float64(v)} }
func Float64(v float64) Num { return Num{Type: stream.TypeDouble, F: v} }

func (n Num) String() string {
	switch n.Type {
	case stream.Type32, stream.Type64:
		return fmt.Sprint(n.I)
	case stream.TypeU32, stream.TypeU64:
		return fmt.Sprint(n.U)
	case stream.TypeFloat:
		return fmt.Sprint(float32(n.F))
	}
	return fmt.Sprint(n.F)
}

// Float returns n as a float64.
func (n Num) Float() float64 {
	switch n.Type {
	case stream.Type32, stream.Type64:
		return float64(n.I)
	case stream.TypeU32, stream.TypeU64:
		return float64(n.U)
	}
	return n.F
}

// NumFromValue decodes a result value of type t.
func NumFromValue(v stream.Value, t stream.Type) (Num, error) {
	switch t {
	case stream.Type32, stream.Type64:
		i, err := v.Int64(t)
		return Num{Type: t, I: i}, err
	case stream.TypeU32, stream.TypeU64:
		u, err := v.Uint64(t)
		return Num{Type: t, U: u}, err
	case stream.TypeFloat, stream.TypeDouble:
		f, err := v.Float64(t)
		return Num{Type: t, F: f}, err
	}
	return Num{}, ErrConv
}

// Scale is the factor of a scale change: values are multiplied by
// Mult/Div.
type Scale struct{ Mult, Div int64 }

// ScaleFor computes pmConvScale's factor from one unit to another. Their
// dimensions must agree (dimension "none" counts as "count"); ErrConv
// otherwise, ErrUnit for an unknown scale.
func ScaleFor(from, to stream.Units) (Scale, error) {
	type u struct{ ds, dt, dc, ss, st, sc int }
	unpack := func(x stream.Units) u {
		r := u{x.DimSpace(), x.DimTime(), x.DimCount(), int(x.ScaleSpace()), int(x.ScaleTime()), x.ScaleCount()}
		if r.ds == 0 && r.dt == 0 && r.dc == 0 {
			r.dc = 1
		}
		return r
	}
	in, out := unpack(from), unpack(to)
	if in.ds != out.ds || in.dt != out.dt || in.dc != out.dc {
		return Scale{}, ErrConv
	}
	div, mult := int64(1), int64(1)
	apply := func(dim int, d, m int64) {
		if dim > 0 {
			for k := 0; k < dim; k++ {
				div *= d
				mult *= m
			}
		} else {
			for k := dim; k < 0; k++ {
				mult *= d
				div *= m
			}
		}
	}
	// space: MBYTE is the canonical unit
	spaceF := [...]int64{1 << 20, 1 << 10, 1, 1 << 10, 1 << 20, 1 << 30, 1 << 40}
	if in.ds != 0 {
		if in.ss > 6 || out.ss > 6 {
			return Scale{}, ErrUnit
		}
		d, m := int64(1), int64(1)
		if in.ss < 2 {
			d = spaceF[in.ss]
		} else {
			m = spaceF[in.ss]
		}
		if out.ss < 2 {
			m *= spaceF[out.ss]
		} else {
			d *= spaceF[out.ss]
		}
		apply(in.ds, d, m)
	}
	// time: SEC is the canonical unit
	timeF := [...]int64{1e9, 1e6, 1e3, 1, 60, 3600}
	if in.dt != 0 {
		if in.st > 5 || out.st > 5 {
			return Scale{}, ErrUnit
		}
		d, m := int64(1), int64(1)
		if in.st < 3 {
			d = timeF[in.st]
		} else {
			m = timeF[in.st]
		}
		if out.st < 3 {
			m *= timeF[out.st]
		} else {
			d *= timeF[out.st]
		}
		apply(in.dt, d, m)
	}
	if in.dc != 0 || (in.ds == 0 && in.dt == 0) {
		d, m := int64(1), int64(1)
		for k := in.sc; k < 0; k++ {
			d *= 10
		}
		for k := 0; k < in.sc; k++ {
			m *= 10
		}
		for k := out.sc; k < 0; k++ {
			m *= 10
		}
		for k := 0; k < out.sc; k++ {
			d *= 10
		}
		if in.dc != 0 {
			apply(in.dc, d, m)
		} else {
			mult, div = m, d
		}
	}
	if mult%div == 0 {
		mult /= div
		div = 1
	}
	return Scale{Mult: mult, Div: div}, nil
}

// Apply rescales n as pmConvScale does: integers as (v*Mult + Div/2)/Div
// in 64-bit arithmetic then narrowed to the type (so it rounds half up for
// positive values and wraps on overflow as C does), floats by multiplying
// with Mult/Div computed in the value's precision.
func (s Scale) Apply(n Num) Num {
	switch n.Type {
	case stream.Type32:
		n.I = int64(int32((n.I*s.Mult + s.Div/2) / s.Div))
	case stream.TypeU32:
		n.U = uint64(uint32((int64(n.U)*s.Mult + s.Div/2) / s.Div))
	case stream.Type64:
		n.I = (n.I*s.Mult + s.Div/2) / s.Div
	case stream.TypeU64:
		n.U = (n.U*uint64(s.Mult) + uint64(s.Div)/2) / uint64(s.Div)
	case stream.TypeFloat:
		n.F = float64(float32(n.F) * (float32(s.Mult) / float32(s.Div)))
	case stream.TypeDouble:
		n.F = n.F * (float64(s.Mult) / float64(s.Div))
	}
	return n
}

// ConvScale rescales n from one unit to another (pmConvScale).
func ConvScale(n Num, from, to stream.Units) (Num, error) {
	if !n.Type.Numeric() {
		return n, ErrConv
	}
	s, err := ScaleFor(from, to)
	if err != nil {
		return n, err
	}
	return s.Apply(n), nil
}

// Retype converts n to type to, as pmExtractValue does: ErrSign for a
// negative value into an unsigned type, ErrTrunc when the value does not
// fit, floating point to integer truncating toward zero. As in libpcp a
// 64-bit value below -2^31 converts to 32 bits by wrapping; unlike libpcp
// (where C leaves it undefined) a float below -2^63 is ErrTrunc for 64.
func Retype(n Num, to stream.Type) (Num, error) {
	if n.Type == to {
		return n, nil
	}
	out := Num{Type: to}
	switch n.Type {
	case stream.Type32, stream.Type64:
		v := n.I
		switch to {
		case stream.Type32:
			if v > math.MaxInt32 {
				return out, ErrTrunc
			}
			out.I = int64(int32(v))
		case stream.TypeU32:
			if n.Type == stream.Type64 && v > math.MaxUint32 {
				return out, ErrTrunc
			}
			if v < 0 {
				return out, ErrSign
			}
			out.U = uint64(uint32(v))
		case stream.Type64:
			out.I = v
		case stream.TypeU64:
			if v < 0 {
				return out, ErrSign
			}
			out.U = uint64(v)
		case stream.TypeFloat:
			out.F = float64(float32(v))
		case stream.TypeDouble:
			out.F = float64(v)
		default:
			return out, ErrConv
		}
	case stream.TypeU32, stream.TypeU64:
		v := n.U
		switch to {
		case stream.Type32:
			if v > math.MaxInt32 {
				return out, ErrTrunc
			}
			out.I = int64(v)
		case stream.TypeU32:
			if v > math.MaxUint32 {
				return out, ErrTrunc
			}
			out.U = v
		case stream.Type64:
			if v > math.MaxInt64 {
				return out, ErrTrunc
			}
			out.I = int64(v)
		case stream.TypeU64:
			out.U = v
		case stream.TypeFloat:
			out.F = float64(float32(v))
		case stream.TypeDouble:
			out.F = float64(v)
		default:
			return out, ErrConv
		}
	case stream.TypeFloat, stream.TypeDouble:
		v := n.F
		lim := func(x float64) float64 { // the limit as the C code computes it
			if n.Type == stream.TypeFloat {
				return float64(float32(x))
			}
			return x
		}
		switch to {
		case stream.Type32:
			if math.Abs(v) >= lim(math.MaxInt32) || math.IsNaN(v) {
				return out, ErrTrunc
			}
			out.I = int64(int32(v))
		case stream.TypeU32:
			if v >= lim(math.MaxUint32) || math.IsNaN(v) {
				return out, ErrTrunc
			}
			if v < 0 {
				return out, ErrSign
			}
			out.U = uint64(uint32(v))
		case stream.Type64:
			if v >= lim(math.MaxInt64) || v < math.MinInt64 || math.IsNaN(v) {
				return out, ErrTrunc
			}
			out.I = int64(v)
		case stream.TypeU64:
			if v >= lim(math.MaxUint64) || math.IsNaN(v) {
				return out, ErrTrunc
			}
			if v < 0 {
				return out, ErrSign
			}
			out.U = uint64(v)
		case stream.TypeFloat:
			out.F = float64(float32(v))
		case stream.TypeDouble:
			out.F = v
		default:
			return out, ErrConv
		}
	default:
		return out, ErrConv
	}
	return out, nil
}

// Reduce collapses the values of one value set (all of the metric's old
// type) as OUTPUT does, in the old type. It returns the index of the value
// whose instance the output keeps (0 for SUM and AVG, the first of equal
// values for MIN and MAX) and the output value. SUM wraps as C integers
// do; AVG of integers is (int)(0.5 + sum/n), truncated toward zero; AVG
// of FLOAT is computed in float32. OutputAll, OutputInst and an empty
// input are not reductions: Reduce returns -1.
func Reduce(kind OutputKind, vals []Num) (int, Num) {
	if len(vals) == 0 {
		return -1, Num{}
	}
	switch kind {
	case OutputFirst:
		return 0, vals[0]
	case OutputLast:
		return len(vals) - 1, vals[len(vals)-1]
	case OutputMin, OutputMax:
		pick := 0
		for j := 1; j < len(vals); j++ {
			if less(vals[j], vals[pick]) == (kind == OutputMin) && !equal(vals[j], vals[pick]) {
				pick = j
			}
		}
		return pick, vals[pick]
	case OutputSum, OutputAvg:
		t := vals[0].Type
		s := Num{Type: t}
		var f32 float32
		for _, v := range vals {
			switch t {
			case stream.Type32:
				s.I = int64(int32(s.I) + int32(v.I))
			case stream.TypeU32:
				s.U = uint64(uint32(s.U) + uint32(v.U))
			case stream.Type64:
				s.I += v.I
			case stream.TypeU64:
				s.U += v.U
			case stream.TypeFloat:
				f32 += float32(v.F)
			case stream.TypeDouble:
				s.F += v.F
			}
		}
		if t == stream.TypeFloat {
			s.F = float64(f32)
		}
		if kind == OutputAvg {
			n := float64(len(vals))
			switch t {
			case stream.Type32:
				s.I = int64(int32(0.5 + float64(s.I)/n))
			case stream.TypeU32:
				s.U = uint64(uint32(0.5 + float64(s.U)/n))
			case stream.Type64:
				s.I = int64(0.5 + float64(s.I)/n)
			case stream.TypeU64:
				s.U = uint64(0.5 + float64(s.U)/n)
			case stream.TypeFloat:
				s.F = float64(f32 / float32(len(vals)))
			case stream.TypeDouble:
				s.F /= n
			}
		}
		return 0, s
	}
	return -1, Num{}
}

func less(a, b Num) bool {
	switch a.Type {
	case stream.Type32, stream.Type64:
		return a.I < b.I
	case stream.TypeU32, stream.TypeU64:
		return a.U < b.U
	}
	return a.F < b.F
}

func equal(a, b Num) bool { return !less(a, b) && !less(b, a) }
