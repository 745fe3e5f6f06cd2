package stream

import "testing"

// TestUnitsExtra72: PCP 7.2 gave pmUnits' last byte to extra units
// (extraUnit:5 extraScale:3); they print as its pmUnitsStr prints them,
// before the other positive dimensions, or after "/" when negative.
func TestUnitsExtra72(t *testing.T) {
	extra := func(u Units, unit int, scale uint) Units {
		return u | Units(uint32(unit&0x1f)<<3|uint32(scale&7))
	}
	tests := []struct {
		u    Units
		want string
	}{
		{NewUnits(1, -1, 0, 0, 3, 0), "byte / sec"},
		{extra(0, 1, 1), "temperature (C)"},
		{extra(0, 2, 2), "voltage (mV)"},
		{extra(0, 3, 3), "current (uA)"},
		{extra(0, 4, 2), "power (W)"},
		{extra(0, 4, 7), "power (scale-7)"},
		{extra(0, 9, 1), "extra-9"},
		{extra(NewUnits(0, 1, 0, 0, 5, 0), 4, 1), "power (kW) hour"},
		{extra(NewUnits(0, 0, 1, 0, 0, 0), -1, 3), "count / temperature (K)"},
		{extra(NewUnits(0, -1, 0, 0, 3, 0), -2, 1), "/ voltage (V) sec"},
	}
	for _, tc := range tests {
		if got := tc.u.String(); got != tc.want {
			t.Errorf("%#08x: %q, want %q", uint32(tc.u), got, tc.want)
		}
	}
	u := extra(NewUnits(1, 0, 0, 2, 0, 0), -3, 2)
	if u.ExtraUnit() != -3 || u.ExtraScale() != 2 || u.DimSpace() != 1 || u.ScaleSpace() != 2 {
		t.Errorf("fields of %#08x: %d %d %d %d", uint32(u), u.ExtraUnit(), u.ExtraScale(), u.DimSpace(), u.ScaleSpace())
	}
}
