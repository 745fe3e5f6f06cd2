package dump

import (
	"encoding/binary"
	"fmt"
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

// TestEventSummaryHostileCount: an event array claiming 2^31-1 records,
// the first flagged as missed, is summarised at once (libpcp's walk stays
// on that record for every one left: counted by multiplication, not by
// two billion steps), and its parameters counted as libpcp counts them.
func TestEventSummaryHostileCount(t *testing.T) {
	p := make([]byte, 4+8+8)
	binary.BigEndian.PutUint32(p, 0x7fffffff)
	binary.BigEndian.PutUint32(p[4+8:], eventFlagMissed)
	binary.BigEndian.PutUint32(p[4+12:], 3)
	start := time.Now()
	got := string(appendEventSummary(nil, p, false, time.UTC))
	if time.Since(start) > time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	left := int64(0x7fffffff - 1)
	want := fmt.Sprintf("[2147483647 event records (%d missed) timestamps 00:00:00.000...00:00:00.000]", int32(3*left))
	if got != want {
		t.Errorf("%q, want %q", got, want)
	}
	// Three records, the second missed with 2 parameters: libpcp counts
	// it for the one record left after it, and takes the last time from it.
	q := make([]byte, 0, 64)
	q = binary.BigEndian.AppendUint32(q, 3)
	q = binary.BigEndian.AppendUint32(q, 10) // record 1: 00:00:10, no flags, no parameters
	q = binary.BigEndian.AppendUint32(q, 0)
	q = binary.BigEndian.AppendUint32(q, 0)
	q = binary.BigEndian.AppendUint32(q, 0)
	q = binary.BigEndian.AppendUint32(q, 20) // record 2: 00:00:20, missed, 2
	q = binary.BigEndian.AppendUint32(q, 0)
	q = binary.BigEndian.AppendUint32(q, eventFlagMissed)
	q = binary.BigEndian.AppendUint32(q, 2)
	if got, want := string(appendEventSummary(nil, q, false, time.UTC)), "[3 event records (2 missed) timestamps 00:00:10.000...00:00:20.000]"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
