package interop

import (
	"strings"
	"sync"
	"testing"
)

// views are the pmdumplog views pcpcat must print identically.
var views = [][]string{
	{"-a"}, {"-d"}, {"-i"}, {"-I"}, {"-L"}, {"-l"}, {"-t"}, {"-e"}, {"-h"}, {"-m"}, {"-s"},
	{"-x"}, {"-xx"}, {"-xxx"}, {"-z"}, {"-Z", "EST-10"}, {"-a", "-e", "-h", "-I"},
}

// halfViews are the views that read every value again only to print it
// another way (more hex, another time zone): each runs on half the
// archives (rotation), the others on all.
var halfViews = map[string]bool{"-xx": true, "-xxx": true, "-z": true, "-Z EST-10": true}

// TestViewsLikePmdumplog: `pcpcat VIEW A` prints what `pmdumplog VIEW A`
// prints, for every view and every QA archive (halfViews on half of
// them; PCPTOOLS_QA_FULL=1 runs those on all).
func TestViewsLikePmdumplog(t *testing.T) {
	needPCP(t)
	var mu sync.Mutex
	pass := map[string]int{}
	total := map[string]int{}
	archives := lightArchives(t)
	half := rotation(archives, 2)
	forEach(t, archives, func(t *testing.T, a string) {
		for j, v := range views {
			key := strings.Join(v, " ")
			if halfViews[key] && !half(a, j) {
				continue
			}
			args := append(append([]string{}, v...), a)
			want, wcode, werr := outputOf(t, "pmdumplog", args...)
			got, gcode, gerr := outputOf(t, ours("pcpcat"), args...)
			mu.Lock()
			total[key]++
			mu.Unlock()
			if wcode != 0 {
				// pmdumplog fails on this archive: we must fail too, or warn.
				if gcode == 0 && gerr == "" {
					t.Errorf("pcpcat %s: pmdumplog fails (%s) but we say nothing", key, strings.TrimSpace(werr))
				}
				continue
			}
			if d := sameDump(want, got, "", ""); d != "" {
				t.Errorf("pcpcat %s differs from pmdumplog: %s", key, d)
				continue
			}
			mu.Lock()
			pass[key]++
			mu.Unlock()
		}
	})
	for _, v := range views {
		k := strings.Join(v, " ")
		t.Logf("view %-16s identical on %d of %d archives", k, pass[k], total[k])
	}
}
