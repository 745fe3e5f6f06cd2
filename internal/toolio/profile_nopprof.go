//go:build !pprof

package toolio

import (
	"fmt"
	"os"
)

// startProfiles, in a build without the pprof tag, says so for each
// profile asked for.
func startProfiles(cpuPath, memPath string) func() {
	for _, v := range []struct{ name, path string }{{"PCPTOOLS_CPUPROFILE", cpuPath}, {"PCPTOOLS_MEMPROFILE", memPath}} {
		if v.path != "" {
			fmt.Fprintf(os.Stderr, "%s: this binary was built without profiling; build it with: make build TAGS='urfave_cli_no_docs pprof'\n", v.name)
		}
	}
	return func() {}
}
