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
// returned function stops and writes them. With PCPTOOLS_MEMSTATS set, it
// also prints the runtime's memory figures at exit (KiB) on stderr.
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
		if os.Getenv("PCPTOOLS_MEMSTATS") != "" {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Fprintf(os.Stderr, "memstats: heapsys %d inuse %d idle %d released %d stack %d mspan %d gc %d other %d numgc %d\n",
				m.HeapSys>>10, m.HeapInuse>>10, m.HeapIdle>>10, m.HeapReleased>>10, m.StackSys>>10, m.MSpanSys>>10, m.GCSys>>10, m.OtherSys>>10, m.NumGC)
		}
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
