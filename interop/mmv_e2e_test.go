package interop

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMMVRecordMatchesPmlogger starts pmcd by hand with only pmdammv (a
// pipe PMDA reading a private PCP_TMP_DIR/mmv), records the MMV fixtures
// with pmlogger through it and with pcpmmv record directly, and compares
// the two archives' metadata for domain 70 under pmdumplog -d -i -e -h
// (descriptions, instance domains, help text, and the label sets: pmcd's
// context set, which both take from this host and from site label files
// in a private PCP_SYSCONF_DIR, and domain 70's), and the
// values of metrics that do not change. Only the pmcd it started is
// stopped, by its PID.
func TestMMVRecordMatchesPmlogger(t *testing.T) {
	files := mmvFixtures(t)
	for _, p := range []string{"/usr/lib/pcp/bin/pmcd", "/usr/lib/pcp/bin/pmlogger", "/usr/lib/pcp/pmdas/mmv/pmdammv"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("required in CI and missing: %v", err)
			}
			t.Skipf("missing: %v", err)
		}
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("pmcd needs root, and CI runs this test")
		}
		t.Skip("pmcd needs root")
	}
	d := t.TempDir()
	// pmcd runs pmdammv as the pcp user: it must see the files
	for _, dir := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"tmp/mmv", "run"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// files of processes that died (FlagProcess) are dropped by both
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "tmp/mmv", filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// pmdammv reloads when the directory looks newer than its last load,
	// which a directory made this second always does: age it.
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(d, "tmp/mmv"), past, past); err != nil {
		t.Fatal(err)
	}
	conf := "pmcd\t2\tdso\tpmcd_init\t/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so\n" +
		"mmv\t70\tpipe\tbinary\t\t/usr/lib/pcp/pmdas/mmv/pmdammv -d 70\n"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Site labels in a private PCP_SYSCONF_DIR (a copy of this host's),
	// which pmcd merges into the context label set and pcpmmv must merge
	// alike: a plain file with an object value (flattened to zone.a,
	// zone.b) and an optional one.
	sysconf := filepath.Join(d, "etc")
	if out, err := exec.Command("cp", "-r", "/etc/pcp", sysconf).CombinedOutput(); err != nil {
		t.Fatalf("copying /etc/pcp: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(sysconf, "labels", "optional"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("etc/labels/site.json", `{"site":"lab1","zone":{"a":1,"b":"x"}}`+"\n")
	write("etc/labels/optional/rack.json", `{"rack":"r7"}`+"\n")
	t.Setenv("PCP_SYSCONF_DIR", sysconf) // for pcpmmv (run passes the environment on)
	write("pmcd.conf", conf)
	write("root", "root {\n\tmmv\t70:*:*\n}\n")
	write("logger.conf", "log mandatory on 1 sec {\n\tmmv\n}\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	env := append(os.Environ(), "PCP_SYSCONF_DIR="+sysconf, "PCP_TMP_DIR="+filepath.Join(d, "tmp"), "PCP_RUN_DIR="+filepath.Join(d, "run"),
		"PCP_LOG_DIR="+d, "PMCD_PORT="+port, "TZ=UTC")
	pmcd := exec.Command("/usr/lib/pcp/bin/pmcd", "-f", "-c", filepath.Join(d, "pmcd.conf"), "-n", filepath.Join(d, "root"),
		"-l", filepath.Join(d, "pmcd.log"), "-i", "127.0.0.1", "-p", port, "-s", filepath.Join(d, "run", "pmcd.socket"))
	pmcd.Env = env
	pmcd.Dir = d // the PMDA writes its log (mmv.log) in pmcd's working directory
	if err := pmcd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		pmcd.Process.Kill() // the pmcd we started, by its PID; it takes pmdammv down with it
		pmcd.Wait()
	}()
	var up bool
	for i := 0; i < 100 && !up; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			up = true
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !up {
		log, _ := os.ReadFile(filepath.Join(d, "pmcd.log"))
		t.Fatalf("pmcd did not start:\n%s", log)
	}
	logger := exec.Command("/usr/lib/pcp/bin/pmlogger", "-h", "127.0.0.1", "-c", filepath.Join(d, "logger.conf"),
		"-s", "2", "-t", "200msec", "-l", filepath.Join(d, "logger.log"), filepath.Join(d, "pml"))
	logger.Env = env
	if out, err := logger.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(d, "logger.log"))
		t.Fatalf("pmlogger: %v\n%s\n%s", err, out, log)
	}
	r := run(time.Minute, nil, ours("pcpmmv"), "record", "-t", "200ms", "-s", "2", filepath.Join(d, "tmp/mmv"), "-o", filepath.Join(d, "ours"))
	if r.code != 0 {
		t.Fatalf("pcpmmv record: exit %d: %s", r.code, r.stderr)
	}
	meta := func(a string) string {
		r := run(time.Minute, nil, "pmdumplog", "-d", "-i", "-e", "-h", filepath.Join(d, a))
		if r.code != 0 {
			t.Fatalf("pmdumplog %s: %s", a, r.stderr)
		}
		return domain70(r.stdout)
	}
	want, got := meta("pml"), meta("ours")
	if want != got {
		t.Errorf("metadata differs:\n%s", mmvDiff(want, got, "pmlogger", "pcpmmv"))
	}
	// the comparison saw the fixtures' metrics (v1flags and v3long are
	// left out by both: their writer, the fixture script, has exited)
	for _, name := range []string{"mmv.v1plain.m0.single", "mmv.m0.single", "mmv.v2long.", "mmv.v3labels.r0.single",
		"Context labels", `"rack":"r7","site":"lab1","zone.a":1,"zone.b":"x"}`, "[context,compound,optional]",
		`Domain 70 labels (15 bytes): {"agent":"mmv"}`, "Cluster 70.321 labels", "PMID 70.321.31 labels",
		"InDom 70.657417 labels", `InDom 70.657417[6] labels (11 bytes): {"map.a":1}`,
		`InDom 70.657417[0] labels (34 bytes): {"b0":7,"multi.a":1,"multi.b":"x"}`, "InDom 70.2051[7] labels (0 bytes)"} {
		if !strings.Contains(got, name) {
			t.Errorf("recorded metadata lacks %s", name)
		}
	}
	if strings.Contains(got, "mmv.v1flags.") {
		t.Errorf("recorded a file whose process has exited (MMV_FLAG_PROCESS)")
	}
	// values: every fixture value is constant (no timer runs), so the
	// last sample of each archive must agree, metric by metric.
	vals := func(a string) string {
		r := run(time.Minute, nil, "pminfo", "-f", "-a", filepath.Join(d, a), "mmv")
		if r.code != 0 {
			t.Fatalf("pminfo %s: %s", a, r.stderr)
		}
		return r.stdout
	}
	if w, g := sortedBlocks(vals("pml")), sortedBlocks(vals("ours")); w != g {
		t.Errorf("values differ:\n%s", mmvDiff(w, g, "pmlogger", "pcpmmv"))
	}
}

var (
	timeLine  = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d+ `)
	labelTime = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d+$`)
	labelHead = regexp.MustCompile(`^    (Context|Domain 70|Cluster 70\.|PMID 70\.|InDom 70\.)`)
)

// domain70 keeps the blocks of pmdumplog -d -i -e -h output that describe
// domain 70 (pmdammv's), and the context label set, without the times of
// instance domain and label records (the label section keeps how many
// times it has), sorted within each section: the order of pmdumplog's
// hash walk differs between archives that hold the same metadata.
//
// The context label set is compared as it is: pmcd gives pmlogger
// (connected over TCP, so without credentials: no userid or groupid) this
// host's hostname, domainname and machineid, which pcpmmv reads from the
// same places. Nothing in it is pmlogger's own, so nothing is normalised.
func domain70(s string) string {
	var out []string
	var blocks []string
	var cur []string
	labels, times := false, 0
	keep := func(head string) bool {
		if labels {
			return labelHead.MatchString(head)
		}
		return strings.HasPrefix(head, "PMID: 70.") || strings.HasPrefix(head, "InDom: 70.")
	}
	flush := func() {
		if len(cur) > 0 && keep(cur[0]) {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasSuffix(line, "in the Log ..."):
			flush()
			slices.Sort(blocks)
			if labels {
				out = append(out, fmt.Sprintf("(%d label times)", times))
			}
			out = append(out, blocks...)
			blocks = nil
			out = append(out, line)
			labels = strings.HasPrefix(line, "Metric Labels")
		case labels && labelTime.MatchString(line):
			flush()
			times++
		case labels && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "        "):
			flush()
			cur = []string{line}
		case labels:
			if strings.TrimSpace(line) != "" {
				cur = append(cur, line)
			}
		case strings.HasPrefix(line, "PMID: ") && !(len(cur) > 0 && strings.HasPrefix(cur[0], line+" [")) || strings.HasPrefix(line, "InDom: "):
			flush()
			cur = []string{line}
		case timeLine.MatchString(line):
			cur = append(cur, timeLine.ReplaceAllString(line, "TIME "))
		case strings.TrimSpace(line) == "":
		default:
			cur = append(cur, line)
		}
	}
	flush()
	slices.Sort(blocks)
	if labels {
		out = append(out, fmt.Sprintf("(%d label times)", times))
	}
	return strings.Join(append(out, blocks...), "\n")
}

// sortedBlocks sorts pminfo's blank-line separated blocks.
func sortedBlocks(s string) string {
	b := strings.Split(strings.TrimSpace(s), "\n\n")
	slices.Sort(b)
	return strings.Join(b, "\n\n")
}
