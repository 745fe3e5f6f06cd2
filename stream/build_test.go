package stream

import (
	"math"
	"testing"
)

func TestResultBuilderRoundTrip(t *testing.T) {
	var b ResultBuilder
	b.Add(NewPMID(60, 0, 1), Type32, Val{Inst: InstNull, I: -7})
	b.Add(NewPMID(60, 0, 2), TypeU64, Val{Inst: 0, U: math.MaxUint64}, Val{Inst: 1, U: 42})
	b.Add(NewPMID(60, 0, 3), TypeString, Val{Inst: InstNull, S: "hello, world"})
	b.Add(NewPMID(60, 0, 4), TypeDouble, Val{Inst: 3, F: 0.25})
	b.Add(NewPMID(60, 0, 5), TypeFloat, Val{Inst: 3, F: 1.5})
	b.AddError(NewPMID(60, 0, 6), -12357)
	var r Result
	if err := b.Build(Timestamp{Sec: 1700000000, Nsec: 5}, &r); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	it := r.VSets()
	var got []string
	for it.Next() {
		vs := it.VSet()
		for i := 0; i < vs.Values(); i++ {
			v, err := vs.Value(i)
			if err != nil {
				t.Fatal(err)
			}
			switch vs.PMID.Item() {
			case 1:
				n, _ := v.Int64(Type32)
				if n != -7 {
					t.Errorf("32: got %d", n)
				}
			case 2:
				u, _ := v.Uint64(TypeU64)
				if (vs.Inst(i) == 0 && u != math.MaxUint64) || (vs.Inst(i) == 1 && u != 42) {
					t.Errorf("U64 inst %d: got %d", vs.Inst(i), u)
				}
			case 3:
				got = append(got, string(v.Bytes(TypeString)))
			case 4:
				f, _ := v.Float64(TypeDouble)
				if f != 0.25 {
					t.Errorf("double: got %v", f)
				}
			case 5:
				f, _ := v.Float64(TypeFloat)
				if f != 1.5 {
					t.Errorf("float: got %v", f)
				}
			}
		}
		if vs.PMID.Item() == 6 && vs.NumVal != -12357 {
			t.Errorf("error set: numval %d", vs.NumVal)
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if len(got) != 1 || got[0] != "hello, world" {
		t.Errorf("string: %q", got)
	}
	// v3 -> v2 -> v3 through AppendBody is the identity.
	v2, err := r.AppendBody(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	r2 := Result{Version: 2, Body: v2}
	if err := r2.Validate(); err != nil {
		t.Fatal(err)
	}
	v3, _ := r2.AppendBody(nil, 3)
	if string(v3) != string(r.Body) {
		t.Error("v3->v2->v3 changes the body")
	}
	// Built in v2's layout, it is that body.
	b.Version = 2
	var r3 Result
	if err := b.Build(r.T, &r3); err != nil {
		t.Fatal(err)
	}
	if r3.Version != 2 || string(r3.Body) != string(v2) {
		t.Errorf("Version 2: got version %d, %x; want %x", r3.Version, r3.Body, v2)
	}
}

func TestResultBuilderNoAllocs(t *testing.T) {
	var b ResultBuilder
	var r Result
	vals := make([]Val, 100)
	allocs := testing.AllocsPerRun(100, func() {
		b.Reset()
		b.Add(NewPMID(1, 2, 3), TypeU64, vals...)
		_ = b.Build(Timestamp{}, &r)
	})
	if allocs > 0 {
		t.Errorf("%v allocations per result after warm-up", allocs)
	}
}
