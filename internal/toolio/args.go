package toolio

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pcptools/pcptools/format"
)

// Permute moves flags before positional arguments, so that PCP users can
// write `pcpcat A -o OUT` as they write `pmdumplog -a A` (Go's flag parsing,
// under urfave/cli, stops at the first positional argument). valued names
// the flags that take a value in the next argument (without dashes, e.g.
// "o", "Z", "start"). Everything after "--" stays positional.
func Permute(args []string, valued map[string]bool) []string {
	if len(args) == 0 {
		return args
	}
	flags := []string{args[0]}
	var pos []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		// For a cluster of short flags (-zZ tz), the last letter decides.
		if !strings.HasPrefix(a, "--") && len(name) > 1 && !valued[name] {
			name = name[len(name)-1:]
		}
		if valued[name] && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	if len(pos) > 0 {
		flags = append(flags, "--")
		flags = append(flags, pos...)
	}
	return flags
}

// SplitGetopt rewrites clusters of short options as getopt(3) reads them,
// given getopt's option string ("c:dfS:": a letter followed by ':' takes a
// value): "-zS@10:00" becomes "-z", "-S", "@10:00", and "-s10" becomes
// "-s", "10". The tools invoked under PCP's names use it, so that scripts
// written for PCP's getopt work unchanged; under their own names, Go's
// flag syntax (which has single-dash long names) applies.
func SplitGetopt(args []string, optstring string) []string {
	if len(args) == 0 {
		return args
	}
	takes := map[byte]bool{}
	known := map[byte]bool{}
	for i := 0; i < len(optstring); i++ {
		c := optstring[i]
		if c == ':' {
			continue
		}
		known[c] = true
		if i+1 < len(optstring) && optstring[i+1] == ':' {
			takes[c] = true
		}
	}
	out := []string{args[0]}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' || !known[a[1]] {
			out = append(out, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			out = append(out, "-"+string(c))
			if takes[c] {
				if j+1 < len(a) {
					out = append(out, a[j+1:])
				} else if i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				break
			}
		}
	}
	return out
}

// StdioInputs takes "-", the Unix name for standard input, out of a list of
// inputs: ["-"] becomes none, which every tool reads as the stream on
// standard input. A "-" among archive names is refused: a stream and
// archives are not read together.
func StdioInputs(args []string) ([]string, error) {
	if len(args) == 1 && args[0] == "-" {
		return nil, nil
	}
	for _, a := range args {
		if a == "-" {
			return nil, fmt.Errorf("- (standard input) cannot be read together with archives named as arguments: pipe them all through pcpcat")
		}
	}
	return args, nil
}

// StdioOutput maps -o -, the Unix name for standard output, to "", which
// every tool writes as the stream on standard output.
func StdioOutput(o string) string {
	if o == "-" {
		return ""
	}
	return o
}

// InputsAndOutput splits a native command line's arguments into the inputs
// (none: the stream on standard input) and the output ("": the record
// stream on standard output), for the tools whose output may be named
// last: with -o (oSet, o) it is o; without, the last argument names the
// output unless it is an existing archive (then every argument is an
// input).
func InputsAndOutput(oSet bool, o string, args []string) (ins []string, out string, err error) {
	if oSet {
		if o == "" {
			return nil, "", UsageError{Msg: "-o needs the output archive's name (or - for the record stream)"}
		}
		out = StdioOutput(o)
	} else if n := len(args); n > 0 && args[n-1] != "-" && !IsArchive(args[n-1]) {
		out, args = args[n-1], args[:n-1]
	}
	if ins, err = StdioInputs(args); err != nil {
		return nil, "", UsageError{Msg: err.Error()}
	}
	return ins, out, nil
}

// OutputTaken explains err, from opening standard input when no input
// archive was named, where InputsAndOutput took the last argument, out,
// for the output because it names no archive: most often an input's name
// mistyped, which "no input" alone does not tell.
func OutputTaken(err error, out string) error {
	if errors.Is(err, ErrNoInput) || errors.Is(err, ErrEmptyStdin) {
		return UsageError{Msg: fmt.Sprintf("%s: no such archive, so taken as the output archive, and then there is no input: name the input archive before it (-o OUT names the output), or pipe a stream from another pcp* tool", out)}
	}
	return err
}

// IsArchive says whether name names an existing archive (or a directory
// of them, or a list of archives separated by commas).
func IsArchive(name string) bool {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return true
	}
	opens := func(n string) bool {
		_, err := format.Open(n)
		return err == nil
	}
	if slices.ContainsFunc(strings.Split(name, ","), opens) {
		return true
	}
	return opens(name)
}
