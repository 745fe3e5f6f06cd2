package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pcptools/pcptools/internal/toolio"
	"github.com/pcptools/pcptools/pcptime"
	"github.com/pcptools/pcptools/reduce"
)

// nativeOutputs parses -t (a comma-separated list of intervals, default
// 10m) and names the outputs: OUT for one interval; OUT.5m, OUT.1h, ...
// (the interval as given) for several. An empty out is the record stream
// on standard output, for one interval only.
func nativeOutputs(c *cli.Context, out string) ([]reduce.Output, error) {
	spec := "10m"
	if c.IsSet("t") {
		spec = c.String("t")
	}
	parts := strings.Split(spec, ",")
	if out == "" && len(parts) > 1 {
		return nil, toolio.UsageError{Msg: fmt.Sprintf("-t %s writes one archive per interval (OUT.INTERVAL): name them with -o OUT; the record stream on standard output carries one interval", spec)}
	}
	var outs []reduce.Output
	seen := map[time.Duration]bool{}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		d, err := pcptime.ParseInterval(p)
		if err != nil {
			return nil, toolio.UsageError{Msg: fmt.Sprintf("-t %s: %v", p, err)}
		}
		if d <= 0 {
			return nil, toolio.UsageError{Msg: fmt.Sprintf("-t %s: the interval must be positive", p)}
		}
		if seen[d] {
			return nil, toolio.UsageError{Msg: fmt.Sprintf("-t %s: interval given twice", spec)}
		}
		seen[d] = true
		name := out
		if len(parts) > 1 {
			name = out + "." + strings.ReplaceAll(p, string(filepath.Separator), "_")
		}
		outs = append(outs, reduce.Output{Name: name, Interval: d})
	}
	return outs, nil
}

// nativeAlign parses -A in native mode: an interval.
func nativeAlign(c *cli.Context) (time.Duration, error) {
	if !c.IsSet("A") {
		return 0, nil
	}
	d, err := pcptime.ParseInterval(c.String("A"))
	if err != nil || d <= 0 {
		return 0, toolio.UsageError{Msg: fmt.Sprintf("-A %s: need a positive interval", c.String("A"))}
	}
	return d, nil
}

// ignoreMarks reads --ignore-marks, or else $PCP_IGNORE_MARK_RECORDS as
// libpcp reads it: set and empty, every <mark>; an interval, the <mark>s
// with at most that long between the results around them; a value that
// does not parse is warned about and ignored, as libpcp does.
func ignoreMarks(c *cli.Context, stderr io.Writer) (gap time.Duration, all bool, err error) {
	v, given := c.String("ignore-marks"), c.IsSet("ignore-marks")
	if !given {
		env, set := os.LookupEnv("PCP_IGNORE_MARK_RECORDS")
		if !set {
			return 0, false, nil
		}
		if env == "" {
			return 0, true, nil
		}
		d, err := pcptime.ParseInterval(env)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "pcpreduce: warning: bad $PCP_IGNORE_MARK_RECORDS %q: not an interval; <mark>s are kept\n", env)
			return 0, false, nil
		}
		return d, false, nil
	}
	if v == "all" {
		return 0, true, nil
	}
	d, err := pcptime.ParseInterval(v)
	if err != nil || d <= 0 {
		return 0, false, toolio.UsageError{Msg: fmt.Sprintf("--ignore-marks %s: give an interval (such as 5m) or all", v)}
	}
	return d, false, nil
}

// libpcpIgnoreMarks reads $PCP_IGNORE_MARK_RECORDS as pmlogreduce's libpcp
// does (interp.c): set and empty, or an interval of 0, every <mark>; an
// interval, those with at most that long between the records around
// them; a value that does not parse, a warning and none.
func libpcpIgnoreMarks(prog string, stderr io.Writer) (gap time.Duration, all bool) {
	env, set := os.LookupEnv("PCP_IGNORE_MARK_RECORDS")
	if !set {
		return 0, false
	}
	if env == "" {
		return 0, true
	}
	d, err := pcptime.ParseInterval(env)
	if err != nil {
		fmt.Fprintf(stderr, "%s: Warning: bad $PCP_IGNORE_MARK_RECORDS: not in pmParseInterval(3) format:\n%v\n", prog, err)
		return 0, false
	}
	return d, d == 0
}
