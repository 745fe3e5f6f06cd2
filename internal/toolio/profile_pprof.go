//go:build pprof

package toolio

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts the profiles ProfileFromEnv describes.
func startProfiles(cpuPath, memPath string) func() {
	stopCPU := func() {}
	if cpuPath != "" {
		if f, err := os.Create(cpuPath); err != nil {
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
