package toolio

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// ProfileFromEnv starts a CPU profile when PCPTOOLS_CPUPROFILE names a
// file, and arranges for a heap profile (of everything allocated, with
// -sample_index=alloc_space) when PCPTOOLS_MEMPROFILE does (for
// scripts/bench.sh and for anyone chasing a slow or large run); the
// returned function stops and writes them.
func ProfileFromEnv() func() {
	stopCPU := func() {}
	if path := os.Getenv("PCPTOOLS_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err != nil {
			fmt.Fprintf(os.Stderr, "PCPTOOLS_CPUPROFILE: %v\n", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "PCPTOOLS_CPUPROFILE: %v\n", err)
			f.Close()
		} else {
			stopCPU = func() {
				pprof.StopCPUProfile()
				f.Close()
			}
		}
	}
	memPath := os.Getenv("PCPTOOLS_MEMPROFILE")
	if memPath != "" {
		runtime.MemProfileRate = 4096
	}
	return func() {
		stopCPU()
		if memPath == "" {
			return
		}
		f, err := os.Create(memPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "PCPTOOLS_MEMPROFILE: %v\n", err)
			return
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintf(os.Stderr, "PCPTOOLS_MEMPROFILE: %v\n", err)
		}
	}
}
