package format

import (
	"os"
	"strings"
)

// ioMode is how plain files are read and written, from the environment
// variable PCPTOOLS_IO, a comma-separated list, read once:
//
//   - mmap: data volumes are mapped rather than read through a buffer
//     (see Mapped);
//   - async: plain output volumes are written from a goroutine of their
//     own from the start;
//   - direct: they are written from the caller's goroutine throughout.
//
// With neither async nor direct, a plain volume long enough for it to
// matter tries both ways and keeps the faster (writerTrial). The variable
// is there to measure each way on a new host (scripts/bench.sh records
// the CPU), not for everyday use.
var ioMode = parseIOMode(os.Getenv("PCPTOOLS_IO"))

type ioModes struct{ mmap, async, direct bool }

func parseIOMode(s string) ioModes {
	var m ioModes
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "mmap":
			m.mmap = true
		case "async":
			m.async = true
		case "direct":
			m.direct = true
		}
	}
	return m
}
