package main

import "testing"

// TestPcpVerbosity: pmlogrewrite's vflag, as its getopt loop leaves it.
func TestPcpVerbosity(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-vvvv", "-c", "x", "in", "out"}, 4},
		{[]string{"-C", "-v", "-c", "x", "in", "out"}, 2},
		{[]string{"-v", "-C", "-c", "x", "in", "out"}, 1},
		{[]string{"-vv", "-C", "in", "out"}, 1},
		{[]string{"-c", "-v", "in", "out"}, 0},  // "-v" is the rules file
		{[]string{"-cv", "in", "out", "-v"}, 1}, // -c's value "v"; getopt permutes
		{[]string{"-v", "--", "-v"}, 1},
	} {
		if got := pcpVerbosity(c.args); got != c.want {
			t.Errorf("pcpVerbosity(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}
