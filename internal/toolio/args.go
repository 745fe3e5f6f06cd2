package toolio

import "strings"

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
