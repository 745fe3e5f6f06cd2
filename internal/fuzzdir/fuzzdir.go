// Package fuzzdir gives the fuzz targets that read whole archives a
// directory to write them in.
//
// Those targets write their inputs as files and open them as the tools
// do, and the files cost much of an execution: run on FuzzReadArchive's
// seeds, a new t.TempDir on the disk for each took 1.3 ms, the same files
// rewritten in one directory of a tmpfs 0.32 ms (AMD EPYC family 25).
// Fuzzing, where the engine and the instrumented code take their share,
// gained less: 40 s of FuzzReadArchive from its grown corpus executed
// 14,032 inputs against 10,889 before (a second fuzzer on the other
// core both times). 10^8 executions a target (issue 15) are a question
// of executions a second.
//
// A worker killed before it ends leaves its directory behind (at most
// the few files of one input).
package fuzzdir

import (
	"os"
	"testing"
)

// Dir returns a directory for the fuzz target f's files, made once per
// process (each fuzzing worker is a process of its own, and runs one
// execution at a time) and removed when f ends: in /dev/shm when that is
// a directory the process may write, else f.TempDir(). Executions write
// their files there under the same names each time, over the last ones.
func Dir(f *testing.F) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "pcptools-fuzz-"); err == nil {
			f.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return f.TempDir()
}
