// Command pcpmmv looks at PCP memory-mapped value (MMV) files without
// pmcd or pmdammv: "pcpmmv dump FILE" prints what PCP's mmvdump prints;
// "pcpmmv record" samples MMV files into an archive as pmlogger, pmcd and
// pmdammv together would.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/mmv"
)

func main() { toolio.Main(run) }

const usage = `usage: pcpmmv dump FILE
   print the MMV file as PCP's mmvdump does (exit 1 when it is damaged)
       pcpmmv record [-t 1s] [-T DURATION | -s N] FILE|DIR -o ARCHIVE
   record MMV files into an archive, without pmcd or pmlogger
       pcpmmv --version
example: pcpmmv record -t 10s -T 1h $PCP_TMP_DIR/mmv -o app   (pcpmmv record --help: its options)`

func run(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	toolio.GuardFaults()
	defer toolio.CatchPanic("pcpmmv", stderr, &status)
	if done, err := toolio.GenerateFromUsage("pcpmmv", "read and record MMV files", usage, stdout); done {
		return toolio.StatusOf(err, "pcpmmv", stderr)
	}
	if len(args) < 2 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[1] {
	case "dump":
		if len(args) != 3 {
			fmt.Fprintln(stderr, usage)
			return 2
		}
		return dump(args[2], stdout, stderr)
	case "record":
		return record(args[2:], stdin, stdout, stderr)
	case "-h", "-?", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	case "--version", "version":
		fmt.Fprintf(stdout, "pcpmmv version %s\n", toolio.Version())
		return 0
	}
	fmt.Fprintf(stderr, "pcpmmv: unknown command %q\n%s\n", args[1], usage)
	return 2
}

func dump(name string, stdout, stderr io.Writer) int {
	data, err := mmv.ReadFile(name)
	if err != nil {
		fmt.Fprintf(stderr, "pcpmmv: %v\n", err)
		return 1
	}
	return mmv.Dump(stdout, name, data, time.Now())
}
