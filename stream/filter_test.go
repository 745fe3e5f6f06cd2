package stream

import "testing"

func TestAppendSelected(t *testing.T) {
	var b ResultBuilder
	b.Add(NewPMID(1, 0, 1), TypeU32, Val{Inst: -1, U: 7})
	b.Add(NewPMID(1, 0, 2), TypeString, Val{Inst: 0, S: "zero"}, Val{Inst: 1, S: "one"}, Val{Inst: 2, S: "two!"})
	b.Add(NewPMID(1, 0, 3), TypeU64, Val{Inst: 5, U: 1 << 40})
	b.AddError(NewPMID(1, 0, 4), -12345)
	var r Result
	if err := b.Build(Timestamp{Sec: 1}, &r); err != nil {
		t.Fatal(err)
	}
	for _, version := range []uint8{3, 2} {
		src := r
		if version == 2 {
			body, err := r.AppendBody(nil, 2)
			if err != nil {
				t.Fatal(err)
			}
			src = Result{T: r.T, Version: 2, Body: body}
		}
		body, n, err := src.AppendSelected(nil, func(p PMID) Pick {
			switch p.Item() {
			case 2:
				return Pick{Keep: true, Insts: []int32{2, 0, 9}}
			case 3:
				return Pick{Keep: true, Insts: []int32{9}}
			case 4:
				return Pick{Keep: true}
			}
			return Pick{}
		})
		if err != nil || n != 3 {
			t.Fatalf("v%d: n=%d err=%v", version, n, err)
		}
		out := Result{T: src.T, Version: version, Body: body}
		if err := out.Validate(); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		it := out.VSets()
		var got []string
		for it.Next() {
			vs := it.VSet()
			switch vs.PMID.Item() {
			case 2:
				for i := 0; i < vs.Values(); i++ {
					v, err := vs.Value(i)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(v.Bytes(TypeString)))
				}
				if vs.NumVal != 2 || vs.Inst(0) != 2 || vs.Inst(1) != 0 {
					t.Errorf("v%d: string set %d values", version, vs.NumVal)
				}
			case 3:
				if vs.NumVal != 0 {
					t.Errorf("v%d: U64 set kept %d values of an absent instance", version, vs.NumVal)
				}
			case 4:
				if vs.NumVal != -12345 {
					t.Errorf("v%d: error set numval %d", version, vs.NumVal)
				}
			default:
				t.Errorf("v%d: unselected %s kept", version, vs.PMID)
			}
		}
		if len(got) != 2 || got[0] != "two!" || got[1] != "zero" {
			t.Errorf("v%d: strings %q", version, got)
		}
	}
}
