package dump

import (
	"testing"
	"time"

	"github.com/pcptools/pcptools/stream"
)

// TestPrintValuePmlcControl: an event metric's value in place is
// pmlogger's logging control state, which pmPrintValue spells out from
// the PMLC_GET_* bits (libpcp.h): mandatory, on, in the log and available,
// and the interval in the 28 bits above the state.
func TestPrintValuePmlcControl(t *testing.T) {
	for _, c := range []struct {
		w    uint32
		want string
	}{
		{5<<4 | 0xf, "[pmlc control mand on  5]"},
		{1<<4 | 0x1, "[pmlc control adv on nl 1]"},
		{60<<4 | 0x8, "[pmlc control adv off na 60]"},
		{0x2 | 0x8 | 0x4, "[pmlc control mand off  0]"},
	} {
		v := stream.Value{Insitu: true, Word: c.w}
		for _, typ := range []stream.Type{stream.TypeEvent, stream.TypeHighresEvent} {
			if got := string(appendPrintValue(nil, typ, v, time.UTC)); got != c.want {
				t.Errorf("%#x as %s: %q, want %q", c.w, typ, got, c.want)
			}
		}
	}
}
