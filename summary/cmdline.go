package summary

import (
	"fmt"
	"strings"
)

// Command is a parsed pmlogsummary command line.
type Command struct {
	Options
	Archive   string // "" when none was named
	Namespace string // -n (not supported)
	Help      bool   // -? or --help
	Version   bool   // -V
	// Folio is --folio: Archive and the leading Metrics that name files
	// are folios, directories or archives of many hosts (see RunHosts;
	// the command splits them, SplitInputs).
	Folio bool
	// Quiet is -q/--quiet: no progress display on a terminal.
	Quiet bool
}

// UsageError is a command line pmlogsummary refuses; Msg is what it says
// before its usage text.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ShortOptions is pmlogsummary's getopt string (PCP 6.0.3).
const ShortOptions = "abB:D:fFHiIlmMNn:p:rsS:T:vVxyzZ:?"

// longOptions maps pmlogsummary's long options to their letters.
var longOptions = map[string]byte{
	"all": 'a', "bins": 'B', "header": 'H', "mintime": 'i', "maxtime": 'I', "label": 'l',
	"minimum": 'm', "maximum": 'M', "namespace": 'n', "precision": 'p', "sum": 's',
	"start": 'S', "finish": 'T', "verbose": 'v', "samples": 'y', "timezone": 'Z',
	"hostzone": 'z', "version": 'V', "help": '?', "debug": 'D',
}

// ParseCommandLine reads pmlogsummary's arguments (without the program
// name) as its getopt does, options anywhere before "--" and applied in
// order (-a, -b, -s and -x each reset what the others set), then the
// archive and metric specifications. prog names the tool in messages;
// unless it is "pmlogsummary", --json is accepted too.
func ParseCommandLine(prog string, args []string) (*Command, error) {
	c := &Command{Options: Options{Prog: prog, Precision: DefaultPrecision}}
	label := false
	var pos []string
	takes := func(l byte) bool {
		i := strings.IndexByte(ShortOptions, l)
		return i >= 0 && i+1 < len(ShortOptions) && ShortOptions[i+1] == ':'
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		if a == "--json" && prog != "pmlogsummary" {
			c.JSON = true // pcpsummary's own
			continue
		}
		if a == "--csv" && prog != "pmlogsummary" {
			c.CSV = true
			continue
		}
		if a == "--folio" && prog != "pmlogsummary" {
			c.Folio = true
			continue
		}
		if a == "--shape" && prog != "pmlogsummary" {
			c.Shape = true
			continue
		}
		if a == "--fleet" && prog != "pmlogsummary" {
			c.Fleet = true
			continue
		}
		if (a == "--quiet" || a == "-q") && prog != "pmlogsummary" {
			c.Quiet = true
			continue
		}
		if (a == "--percentiles" || strings.HasPrefix(a, "--percentiles=")) && prog != "pmlogsummary" {
			val, ok := strings.CutPrefix(a, "--percentiles=")
			if !ok {
				if i+1 >= len(args) {
					return nil, &UsageError{prog + ": option '--percentiles' requires an argument"}
				}
				i++
				val = args[i]
			}
			ps, err := ParsePercentiles(val)
			if err != nil {
				return nil, err
			}
			c.Percentiles = ps
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			l, err := longOption(prog, name)
			if err != nil {
				return nil, err
			}
			if takes(l) {
				if !hasVal {
					if i+1 >= len(args) {
						return nil, &UsageError{fmt.Sprintf("%s: option '--%s' requires an argument", prog, name)}
					}
					i++
					val = args[i]
				}
			} else if hasVal {
				return nil, &UsageError{fmt.Sprintf("%s: option '--%s' doesn't allow an argument", prog, name)}
			}
			if err := c.apply(prog, l, val, &label); err != nil {
				return nil, err
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			l := a[j]
			if l == ':' || strings.IndexByte(ShortOptions, l) < 0 {
				return nil, &UsageError{fmt.Sprintf("%s: invalid option -- '%c'", prog, l)}
			}
			val := ""
			if takes(l) {
				switch {
				case j+1 < len(a):
					val = a[j+1:]
				case i+1 < len(args):
					i++
					val = args[i]
				default:
					return nil, &UsageError{fmt.Sprintf("%s: option requires an argument -- '%c'", prog, l)}
				}
				j = len(a)
			}
			if err := c.apply(prog, l, val, &label); err != nil {
				return nil, err
			}
		}
	}
	c.Options.Label = label
	if c.JSON && c.CSV {
		return nil, &UsageError{prog + ": at most one of --json and --csv allowed"}
	}
	if len(c.Percentiles) > 0 && !c.JSON && !c.CSV {
		return nil, &UsageError{prog + ": --percentiles goes with --json or --csv (pmlogsummary's lines have no room for them)"}
	}
	if c.Shape && c.CSV {
		return nil, &UsageError{prog + ": --shape goes with the text or --json output (a CSV file has one shape of row)"}
	}
	if c.Fleet && !c.Folio {
		return nil, &UsageError{prog + ": --fleet goes with --folio (a roll-up over many hosts)"}
	}
	if c.Fleet && c.CSV {
		return nil, &UsageError{prog + ": --fleet goes with the text or --json output (a CSV file has one shape of row)"}
	}
	if c.ArchiveZone && c.Zone != "" {
		return nil, &UsageError{prog + ": at most one of -Z and -z allowed"}
	}
	if len(pos) > 0 {
		c.Archive, c.Metrics = pos[0], pos[1:]
	}
	return c, nil
}

func longOption(prog, name string) (byte, error) {
	if l, ok := longOptions[name]; ok {
		return l, nil
	}
	var found []string
	for n := range longOptions {
		if strings.HasPrefix(n, name) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return longOptions[found[0]], nil
	}
	if len(found) > 1 {
		return 0, &UsageError{fmt.Sprintf("%s: option '--%s' is ambiguous", prog, name)}
	}
	return 0, &UsageError{fmt.Sprintf("%s: unrecognized option '--%s'", prog, name)}
}

// strtol reads a decimal number as C's strtol does, reporting whether the
// whole string was used (an empty string is 0, and used). Values beyond
// a long are clamped.
func strtol(s string) (int64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		neg = s[j] == '-'
		j++
	}
	k := j
	var v int64
	over := false
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		d := int64(s[k] - '0')
		if v > (1<<63-1-d)/10 {
			over = true
		} else {
			v = v*10 + d
		}
		k++
	}
	if k == j { // no digits: nothing is used
		return 0, len(s) == 0
	}
	if over {
		if neg {
			return -1 << 63, k == len(s)
		}
		return 1<<63 - 1, k == len(s)
	}
	if neg {
		v = -v
	}
	return v, k == len(s)
}

func (c *Command) apply(prog string, l byte, val string, label *bool) error {
	o := &c.Options
	switch l {
	case 'a':
		o.Stochastic, o.NoTimeAve, *label, o.Count, o.Min, o.Max, o.Sum = true, false, true, true, true, true, false
	case 'b':
		o.Stochastic, o.NoTimeAve, o.Sum = true, false, false
	case 'B':
		n, ok := strtol(val)
		if !ok || int32(n) < 0 {
			return &UsageError{prog + ": -B requires positive numeric argument"}
		}
		o.Bins = int(uint32(int32(n)))
	case 'D':
		o.Debug = ParseDebug(val, o.Debug)
	case 'f':
		o.Delim = '\t'
	case 'F':
		o.Delim = ','
	case 'H':
		o.Header = true
	case 'i':
		o.MinTime = true
	case 'I':
		o.MaxTime = true
	case 'l':
		*label = true
	case 'm':
		o.Min = true
	case 'M':
		o.Max = true
	case 'n':
		c.Namespace = val
	case 'N':
		o.Verbose = false
	case 'p':
		n, ok := strtol(val)
		if !ok {
			return &UsageError{prog + ": -p requires numeric argument"}
		}
		o.Precision = int(int32(uint32(n)))
	case 'r':
		// In pmlogsummary's getopt string, and ignored.
	case 's':
		o.Stochastic, o.NoTimeAve, *label, o.Count, o.Min, o.Max, o.Sum = false, true, false, false, false, false, true
	case 'S':
		o.Start = val
	case 'T':
		o.Finish = val
	case 'v':
		o.Verbose = true
	case 'V':
		c.Version = true
	case 'x':
		o.Stochastic, o.NoTimeAve, o.Sum = true, true, false
	case 'y':
		o.Count = true
	case 'z':
		o.ArchiveZone = true
	case 'Z':
		o.Zone = val
	case '?':
		c.Help = true
	}
	return nil
}

// SplitInputs splits a --folio command line's positional arguments into
// inputs (every leading argument that names a file or directory, or an
// archive by its base name) and metric specifications (the rest).
func (c *Command) SplitInputs(exists func(string) bool) (inputs, metrics []string) {
	pos := append([]string{c.Archive}, c.Metrics...)
	n := 0
	for n < len(pos) && exists(pos[n]) {
		n++
	}
	return pos[:n], pos[n:]
}
