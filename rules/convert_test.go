package rules

import (
	"errors"
	"testing"

	"github.com/pcptools/pcptools/stream"
)

func TestConvScale(t *testing.T) {
	kb := stream.NewUnits(1, 0, 0, 1, 0, 0)
	mb := stream.NewUnits(1, 0, 0, 2, 0, 0)
	b := stream.NewUnits(1, 0, 0, 0, 0, 0)
	msecPerSec := stream.NewUnits(0, 1, 0, 0, 2, 0)
	usec := stream.NewUnits(0, 1, 0, 0, 1, 0)
	perMsec := stream.NewUnits(0, -1, 0, 0, 2, 0)
	perSec := stream.NewUnits(0, -1, 0, 0, 3, 0)
	none := stream.NewUnits(0, 0, 0, 0, 0, 0)
	x1000 := stream.NewUnits(0, 0, 1, 0, 0, 3)
	count := stream.NewUnits(0, 0, 1, 0, 0, 0)
	tests := []struct {
		in       Num
		from, to stream.Units
		want     Num
		err      error
	}{
		{Uint32(1672), kb, mb, Uint32(2), nil}, // observed with PCP: mem.util.free
		{Uint64(148808), kb, mb, Uint64(145), nil},
		{Int32(1536), b, kb, Int32(2), nil},   // 1.5 rounds up
		{Int32(-1536), b, kb, Int32(-1), nil}, // (-1536+512)/1024 truncates toward zero
		{Int64(3), mb, kb, Int64(3072), nil},
		{Int32(5), msecPerSec, usec, Int32(5000), nil},
		{Uint32(2500), perMsec, perSec, Uint32(2500000), nil},
		{Float64(1.5), kb, b, Float64(1536), nil},
		{Float32(3), b, kb, Float32(3.0 / 1024), nil},
		{Int32(7), none, x1000, Int32(0), nil},
		{Int32(7000), count, x1000, Int32(7), nil},
		{Uint32(4000000000), kb, b, Uint32(uint32(4000000000 * 1024 % (1 << 32))), nil}, // wraps like C
		{Int32(1), kb, usec, Num{}, ErrConv},
	}
	for _, tc := range tests {
		got, err := ConvScale(tc.in, tc.from, tc.to)
		if !errors.Is(err, tc.err) || err == nil && got != tc.want {
			t.Errorf("ConvScale(%v %s, %x->%x) = %v %v, want %v %v", tc.in, TypeName(tc.in.Type), uint32(tc.from), uint32(tc.to), got, err, tc.want, tc.err)
		}
	}
}

func TestRetype(t *testing.T) {
	tests := []struct {
		in   Num
		to   stream.Type
		want Num
		err  error
	}{
		{Int32(-1), stream.TypeU32, Num{}, ErrSign},
		{Int32(-1), stream.TypeU64, Num{}, ErrSign},
		{Int32(-7), stream.Type64, Int64(-7), nil},
		{Uint32(0x80000000), stream.Type32, Num{}, ErrTrunc},
		{Uint32(0x7fffffff), stream.Type32, Int32(0x7fffffff), nil},
		{Int64(1 << 40), stream.Type32, Num{}, ErrTrunc},
		{Int64(-(1 << 40)), stream.Type32, Int32(0), nil}, // libpcp does not check the low bound
		{Int64(1 << 40), stream.TypeU32, Num{}, ErrTrunc},
		{Int64(-1), stream.TypeU32, Num{}, ErrSign},
		{Uint64(1 << 63), stream.Type64, Num{}, ErrTrunc},
		{Uint64(1 << 33), stream.TypeU32, Num{}, ErrTrunc},
		{Float64(-2.9), stream.Type32, Int32(-2), nil},
		{Float64(2.9), stream.TypeU64, Uint64(2), nil},
		{Float64(-0.5), stream.TypeU32, Num{}, ErrSign},
		{Float64(3e9), stream.Type32, Num{}, ErrTrunc},
		{Float32(1e20), stream.Type64, Num{}, ErrTrunc},
		{Float32(0.38), stream.TypeDouble, Float64(float64(float32(0.38))), nil},
		{Float64(0.1), stream.TypeFloat, Float32(0.1), nil},
		{Uint64(1<<64 - 1), stream.TypeDouble, Float64(18446744073709551615), nil},
		{Int32(5), stream.TypeString, Num{}, ErrConv},
	}
	for _, tc := range tests {
		got, err := Retype(tc.in, tc.to)
		if !errors.Is(err, tc.err) || err == nil && got != tc.want {
			t.Errorf("Retype(%v %s -> %s) = %+v %v, want %+v %v", tc.in, TypeName(tc.in.Type), TypeName(tc.to), got, err, tc.want, tc.err)
		}
	}
}

func TestReduce(t *testing.T) {
	i32 := []Num{Int32(3), Int32(-8), Int32(10), Int32(-8)}
	tests := []struct {
		kind OutputKind
		vals []Num
		idx  int
		want Num
	}{
		{OutputFirst, i32, 0, Int32(3)},
		{OutputLast, i32, 3, Int32(-8)},
		{OutputMin, i32, 1, Int32(-8)},
		{OutputMax, i32, 2, Int32(10)},
		{OutputSum, i32, 0, Int32(-3)},
		{OutputAvg, i32, 0, Int32(0)}, // (int)(0.5 + -0.75) = 0
		{OutputAvg, []Num{Int32(1), Int32(2)}, 0, Int32(2)},
		{OutputAvg, []Num{Int32(-1), Int32(-2)}, 0, Int32(-1)},
		{OutputSum, []Num{Int32(0x7fffffff), Int32(1)}, 0, Int32(-0x80000000)},
		{OutputSum, []Num{Uint32(0xffffffff), Uint32(2)}, 0, Uint32(1)},
		{OutputAvg, []Num{Uint64(1), Uint64(2)}, 0, Uint64(2)},
		{OutputAvg, []Num{Int64(-3), Int64(-4)}, 0, Int64(-3)},
		// kernel.all.load { indom -> NULL output avg } in float: PCP gives 0.38 (as float)
		{OutputAvg, []Num{Float32(0.5), Float32(0.36), Float32(0.28)}, 0, Float32((float32(0.5) + float32(0.36) + float32(0.28)) / 3)},
		{OutputMax, []Num{Float64(1), Float64(4), Float64(4)}, 1, Float64(4)},
		{OutputMin, []Num{Uint64(9), Uint64(2)}, 1, Uint64(2)},
		{OutputSum, nil, -1, Num{}},
	}
	for _, tc := range tests {
		idx, got := Reduce(tc.kind, tc.vals)
		if idx != tc.idx || got != tc.want {
			t.Errorf("Reduce(%s, %v) = %d %+v, want %d %+v", tc.kind, tc.vals, idx, got, tc.idx, tc.want)
		}
	}
}
