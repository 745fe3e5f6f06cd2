package toolio

import (
	"fmt"
	"os"
	"runtime"
)

// ProfileFromEnv starts a CPU profile when PCPTOOLS_CPUPROFILE names a
// file, and arranges for a heap profile (of everything allocated, with
// -sample_index=alloc_space) when PCPTOOLS_MEMPROFILE does (for
// scripts/bench.sh and for anyone chasing a slow or large run); the
// returned function stops and writes them. With PCPTOOLS_MEMSTATS set, it
// also prints the runtime's memory figures at exit (KiB) on stderr.
//
// The profiles need a build with the pprof tag (`make build
// TAGS='urfave_cli_no_docs pprof'`): runtime/pprof linked into every tool
// cost about 0.4 MiB of peak memory (its code and its start-up), measured
// on a merge of 100 small archives. Without the tag the variables are
// refused with a message.
func ProfileFromEnv() func() {
	stop := startProfiles(os.Getenv("PCPTOOLS_CPUPROFILE"), os.Getenv("PCPTOOLS_MEMPROFILE"))
	return func() {
		stop()
		if os.Getenv("PCPTOOLS_MEMSTATS") != "" {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Fprintf(os.Stderr, "memstats: heapsys %d inuse %d idle %d released %d stack %d mspan %d gc %d other %d numgc %d\n",
				m.HeapSys>>10, m.HeapInuse>>10, m.HeapIdle>>10, m.HeapReleased>>10, m.StackSys>>10, m.MSpanSys>>10, m.GCSys>>10, m.OtherSys>>10, m.NumGC)
		}
	}
}
