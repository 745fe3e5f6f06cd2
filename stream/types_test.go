package stream

import "testing"

// TestTypeNumeric: the six number types are numeric; strings, aggregates,
// events and types PCP does not define are not.
func TestTypeNumeric(t *testing.T) {
	want := map[Type]bool{Type32: true, TypeU32: true, Type64: true, TypeU64: true, TypeFloat: true, TypeDouble: true}
	for _, ty := range []Type{TypeNoSupport, Type32, TypeU32, Type64, TypeU64, TypeFloat, TypeDouble, TypeString,
		TypeAggregate, TypeAggStatic, TypeEvent, TypeHighresEvent, TypeUnknown, 11, -2} {
		if got := ty.Numeric(); got != want[ty] {
			t.Errorf("%v.Numeric() = %v, want %v", ty, got, want[ty])
		}
	}
}
