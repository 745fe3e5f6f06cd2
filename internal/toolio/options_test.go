package toolio

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpDefaults: --help (and the man pages made from the same flags)
// gives an option's default in words where its zero value would mislead,
// and no "(default: false)" after a switch.
func TestHelpDefaults(t *testing.T) {
	opts := Opts{OptVersion, OptJobs, OptZstd, OptVersion.WithDefault("3"),
		{Name: "n", Value: "N", Kind: Int, Usage: "count"}}
	want := []string{"the input's", "the number of CPUs", "", "3", "0"}
	for i, f := range opts.Flags(false) {
		df := f.(cli.DocGenerationFlag)
		if got := df.GetDefaultText(); df.TakesValue() && got != want[i] {
			t.Errorf("%s: default text %q, want %q", opts[i].Name, got, want[i])
		}
		if s := f.String(); strings.Contains(s, "default: false") || strings.Contains(s, "default: 0)") != (want[i] == "0") {
			t.Errorf("%s: help line %q", opts[i].Name, s)
		}
	}
}
