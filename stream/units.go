package stream

import "strconv"

// String renders units as pmUnitsStr does: positive dimensions,
// then "/ " and the negative ones, each with its scale name and a power
// when it is not 1; all-zero dimensions with a count scale give "x 10^n".
func (u Units) String() string {
	ds, dt, dc := u.DimSpace(), u.DimTime(), u.DimCount()
	var space, tim, count string
	if ds != 0 {
		switch u.ScaleSpace() {
		case 0:
			space = "byte"
		case 1:
			space = "Kbyte"
		case 2:
			space = "Mbyte"
		case 3:
			space = "Gbyte"
		case 4:
			space = "Tbyte"
		case 5:
			space = "Pbyte"
		case 6:
			space = "Ebyte"
		case 7:
			space = "Zbyte"
		case 8:
			space = "Ybyte"
		default:
			space = "space-" + strconv.Itoa(int(u.ScaleSpace()))
		}
	}
	if dt != 0 {
		switch u.ScaleTime() {
		case 0:
			tim = "nanosec"
		case 1:
			tim = "microsec"
		case 2:
			tim = "millisec"
		case 3:
			tim = "sec"
		case 4:
			tim = "min"
		case 5:
			tim = "hour"
		default:
			tim = "time-" + strconv.Itoa(int(u.ScaleTime()))
		}
	}
	if dc != 0 {
		switch sc := u.ScaleCount(); sc {
		case 0:
			count = "count"
		case 1:
			count = "count x 10"
		default:
			count = "count x 10^" + strconv.Itoa(sc)
		}
	}
	eu := u.ExtraUnit()
	extra := ""
	if eu != 0 {
		extra = extraUnitString(eu, u.ExtraScale())
	}
	var b []byte
	if eu > 0 {
		b = append(b, extra...)
		b = append(b, ' ')
	}
	part := func(name string, dim int) {
		b = append(b, name...)
		if dim != 1 {
			b = append(b, '^')
			b = strconv.AppendInt(b, int64(dim), 10)
		}
		b = append(b, ' ')
	}
	if ds > 0 {
		part(space, ds)
	}
	if dt > 0 {
		part(tim, dt)
	}
	if dc > 0 {
		part(count, dc)
	}
	if ds < 0 || dt < 0 || dc < 0 || eu < 0 {
		b = append(b, "/ "...)
		if eu < 0 {
			b = append(b, extra...)
			b = append(b, ' ')
		}
		if ds < 0 {
			part(space, -ds)
		}
		if dt < 0 {
			part(tim, -dt)
		}
		if dc < 0 {
			part(count, -dc)
		}
	}
	if len(b) == 0 {
		switch sc := u.ScaleCount(); sc {
		case 0:
			return ""
		case 1:
			return "x 10"
		default:
			return "x 10^" + strconv.Itoa(sc)
		}
	}
	return string(b[:len(b)-1])
}

// The extra units of PCP 7.2 (libpcp's extraunits.c): a name, and the
// names of the scales 1, 2, ...
var extraUnits = map[int]struct {
	name   string
	scales []string
}{
	1: {"temperature", []string{"C", "F", "K"}},
	2: {"voltage", []string{"V", "mV", "uV"}},
	3: {"current", []string{"A", "mA", "uA"}},
	4: {"power", []string{"kW", "W", "mW", "uW"}},
}

// extraUnitString is PCP 7.2's text of an extra unit: "temperature (C)",
// "power (scale-7)" for a scale it does not know, "extra-9" for a unit.
func extraUnitString(unit int, scale uint) string {
	if unit < 0 {
		unit = -unit
	}
	x, ok := extraUnits[unit]
	if !ok {
		return "extra-" + strconv.Itoa(unit)
	}
	if scale >= 1 && int(scale) <= len(x.scales) {
		return x.name + " (" + x.scales[scale-1] + ")"
	}
	return x.name + " (scale-" + strconv.Itoa(int(scale)) + ")"
}
