package toolio

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// ProfileFromEnv starts a CPU profile when PCPTOOLS_CPUPROFILE names a
// file (for scripts/bench.sh and for anyone chasing a slow run); the
// returned function stops it.
func ProfileFromEnv() func() {
	path := os.Getenv("PCPTOOLS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "PCPTOOLS_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "PCPTOOLS_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
