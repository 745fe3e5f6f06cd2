package interop

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// PCP 6.0.3 has no pmlogredact (it came with 6.1), so its output is made
// here from two independent parts: PCP 6.0.3's pmlogrewrite applies the
// rules its grammar can say (the deletions, the context labels), and this
// file applies the rest to pmdumplog's text of that (the archive's host,
// the string values, the proc instance names), from the substitutions
// pmlogredact's documentation and rule files give. Our pmlogredact's
// archive must dump the same under pmdumplog -a -e, but for the temporal
// index, whose offsets move with the lengths of the changed strings.

// redactDeleted are the metrics the standard rules delete.
var redactDeleted = []string{
	"network.interface.inet_addr", "network.interface.hw_addr", "pmcd.client.whoami",
	"proc.psinfo.environ", "hotproc.psinfo.environ", "proc.psinfo.psargs", "hotproc.psinfo.psargs",
	"proc.psinfo.cwd", "hotproc.psinfo.cwd", "proc.memory.maps", "hotproc.memory.maps",
}

func init() {
	for _, p := range []string{"proc", "hotproc"} {
		for _, id := range []string{"uid", "euid", "suid", "fsuid", "gid", "egid", "sgid", "fsgid"} {
			redactDeleted = append(redactDeleted, p+".id."+id+"_nm")
		}
	}
}

type redactSub struct {
	re   *regexp.Regexp
	with string
}

var (
	redactAll  = redactSub{regexp.MustCompile(`^.*$`), "[redacted]"}
	redactBase = redactSub{regexp.MustCompile(`/.*/(.*)`), "$1"}
	// redactValues are the string metrics whose values are rewritten.
	redactValues = map[string]redactSub{
		"kernel.uname.nodename": redactAll, "pmcd.hostname": redactAll, "pmcd.pmlogger.host": redactAll,
		"pmcd.pmlogger.pmcd_host": redactAll, "pmcd.pmlogger.archive": redactAll, "pmcd.pmie.pmcd_host": redactAll,
		"pmcd.pmie.logfile": redactAll, "ipc.shm.owner": redactAll,
		"pmda.uname":      {regexp.MustCompile(`^([^ ]+) [^ ]+`), "$1 [redacted]"},
		"proc.psinfo.exe": redactBase, "hotproc.psinfo.exe": redactBase,
	}
	// redactInDoms: proc's and hotproc's instance names lose the
	// directories of their command.
	redactInDoms = map[string]bool{"3.9": true, "3.39": true}
	// (an instance name can hold newlines, and regcomp's "." matches them)
	redactIName = redactSub{longest(`(?s)([0-9]+) /.*/(.*)`), "$1 $2"}
)

func longest(re string) *regexp.Regexp {
	r := regexp.MustCompile(re)
	r.Longest()
	return r
}

func (s redactSub) apply(v string) string {
	if m := s.re.FindStringSubmatchIndex(v); m != nil {
		return v[:m[0]] + string(s.re.ExpandString(nil, s.with, v, m)) + v[m[1]:]
	}
	return v
}

var (
	dumpDesc     = regexp.MustCompile(`^PMID: \S+ \((.+)\)$`)
	dumpDescType = regexp.MustCompile(`InDom: (\S+) 0x`)
	dumpInDom    = regexp.MustCompile(`^InDom: (\S+)$`)
	dumpInst     = regexp.MustCompile(`(?s)^(\s+-?\d+ or ")(.*)("\s*)$`)
	dumpMetric   = regexp.MustCompile(`^(\s+\d+\.\d+\.\d+ \(([^)]+)\):)(.*)$`)
	dumpValInst  = regexp.MustCompile(`(?s)inst \[(-?\d+) or "(.*)"\] value`) // one per line; names hold quotes
	dumpStrValue = regexp.MustCompile(`value "(.*)"$`)
)

// continues says whether a line of pmdumplog's text goes on with the
// section above it: indented (a tab: an instance name holding a newline),
// or a time (an instance domain's version, a record).
func continues(l string) bool {
	return l != "" && (l[0] == ' ' || l[0] == '\t' || l[0] >= '0' && l[0] <= '9')
}

// latestNames returns the latest name of each instance of the redacted
// instance domains in pmdumplog -i's text: pmlogrewrite renames an
// instance number everywhere to what its rule makes of that name (libpcp's
// pmGetInDomArchive gives a number reused by another process once).
func latestNames(lines []string) map[string]string {
	latest := map[string]string{}
	indom := ""
	for _, l := range lines {
		if m := dumpInDom.FindStringSubmatch(l); m != nil {
			indom = m[1]
		} else if m := dumpInst.FindStringSubmatch(l); m != nil && redactInDoms[indom] {
			latest[indom+" "+strings.Fields(m[1])[0]] = m[2]
		} else if !continues(l) {
			indom = ""
		}
	}
	return latest
}

// redactDump turns pmdumplog -a -e's text of the partly redacted archive
// into what it must be after the rest of the rules.
func redactDump(t *testing.T, file string) []string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	indomOf := map[string]string{}
	desc, inIndom, metric := "", "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for _, l := range joinQuoted(lines) {
		switch {
		case strings.HasPrefix(l, "Performance metrics from host "):
			l = "Performance metrics from host [redacted]"
		case dumpDesc.MatchString(l):
			desc = dumpDesc.FindStringSubmatch(l)[1]
		case desc != "" && dumpDescType.MatchString(l):
			indomOf[desc] = dumpDescType.FindStringSubmatch(l)[1]
			desc = ""
		case dumpInDom.MatchString(l):
			inIndom = dumpInDom.FindStringSubmatch(l)[1]
		case inIndom != "" && dumpInst.MatchString(l):
		default:
			if m := dumpMetric.FindStringSubmatch(l); m != nil {
				inIndom, metric = "", m[2]
				l = m[1] + redactValueLine(metric, indomOf[metric], m[3])
			} else if metric != "" && strings.HasPrefix(l, "        inst [") {
				l = redactValueLine(metric, indomOf[metric], l)
			} else if l != "" && !continues(l) {
				// (a line of a time starts an instance domain's
				// version or a record: neither ends the section)
				inIndom, metric = "", ""
			}
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The instance names, in the instance domains and in the values.
	latest := latestNames(out)
	rename := func(indom, inst, name string) string {
		if n, ok := latest[indom+" "+inst]; ok {
			if r := redactIName.apply(n); r != n {
				return r
			}
		}
		return name
	}
	indom := ""
	metric = ""
	for i, l := range out {
		if m := dumpInDom.FindStringSubmatch(l); m != nil {
			indom = m[1]
		} else if m := dumpInst.FindStringSubmatch(l); m != nil && redactInDoms[indom] {
			out[i] = m[1] + rename(indom, strings.Fields(m[1])[0], m[2]) + m[3]
		} else if m := dumpMetric.FindStringSubmatch(l); m != nil {
			indom, metric = "", m[2]
		}
		if metric != "" && redactInDoms[indomOf[metric]] {
			out[i] = dumpValInst.ReplaceAllStringFunc(out[i], func(s string) string {
				m := dumpValInst.FindStringSubmatch(s)
				return `inst [` + m[1] + ` or "` + rename(indomOf[metric], m[1], m[2]) + `"] value`
			})
		}
		if l != "" && !continues(l) && !dumpInDom.MatchString(l) {
			indom, metric = "", ""
		}
	}
	return out
}

func redactValueLine(metric, indom, l string) string {
	if sub, ok := redactValues[metric]; ok {
		if m := dumpStrValue.FindStringSubmatchIndex(l); m != nil {
			l = l[:m[2]] + sub.apply(l[m[2]:m[3]]) + l[m[3]:]
		}
	}
	return l
}

// labelOffsets are pmdumplog -e's offsets of a label's name and value in
// its set's JSON. PCP 6.0.3's pmlogrewrite keeps some stale ones when it
// takes a label out of a set (it writes "domainname" at 21 in
// {"domainname":... where it is at 2); ours are right. The test compares
// the JSON, which pmdumplog prints beside them.
// recordSize is pmdumplog -a's size of a record, which changes with the
// strings in it (pmlogcheck checks our records' framing).
var recordSize = regexp.MustCompile(`^\[\d+ bytes\]$`)

var labelOffsets = regexp.MustCompile(`name\(\d+,(\d+)\) : value\(\d+,(\d+)\)`)

// withoutIndex drops the temporal index section, the pmlogger PID and the
// record sizes, and the label offsets.
func withoutIndex(lines []string) []string {
	var out []string
	skip := false
	for _, l := range lines {
		switch {
		case l == "Temporal Index":
			skip = true
		case skip && (l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "\t\tLog Vol") || l[0] >= '0' && l[0] <= '9'):
			continue
		default:
			skip = false
		}
		if !skip && !pidLine.MatchString(l) && !recordSize.MatchString(l) {
			out = append(out, labelOffsets.ReplaceAllString(l, "name(_,$1) : value(_,$2)"))
		}
	}
	return out
}

func readLines(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return joinQuoted(strings.Split(strings.TrimRight(string(b), "\n"), "\n"))
}

// joinQuoted joins a line that opens a quoted name (or value) with the
// lines up to the one that closes it: pmdumplog prints the newlines of an
// instance name as they are.
func joinQuoted(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.Count(l, `"`)%2 == 1 && i+1 < len(lines) {
			i++
			l += "\n" + lines[i]
		}
		out = append(out, l)
	}
	return out
}

// redactArchives are the QA archives the test reads in CI: ones holding
// proc instance names, host names in values and labels, and one with none
// of the redacted metrics; PCPTOOLS_QA_FULL=1 takes every light archive.
var redactArchives = []string{"pcp-zeroconf", "bozo-20170904", "pcp-free-tera", "20180606", "procpid-encode2", "ok-foo"}

func TestPmlogredactStandardRules(t *testing.T) {
	needPCP(t)
	dir := t.TempDir()
	redact := filepath.Join(dir, "pmlogredact")
	if err := os.Symlink(ours("pcprewrite"), redact); err != nil {
		t.Fatal(err)
	}
	var conf strings.Builder
	for _, m := range redactDeleted {
		conf.WriteString("metric " + m + " { delete }\n")
	}
	for _, l := range []string{"hostname", "latitude", "longitude"} {
		conf.WriteString(`label context "` + l + `" { value -> "[redacted]" }` + "\n")
	}
	sub := filepath.Join(dir, "pcp603.conf")
	if err := os.WriteFile(sub, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	archives := []string{}
	for _, a := range redactArchives {
		archives = append(archives, filepath.Join(qaDir, a))
	}
	if os.Getenv("PCPTOOLS_QA_FULL") != "" {
		archives = lightArchives(t)
	}
	forEach(t, archives, func(t *testing.T, a string) {
		d := t.TempDir()
		p, o := filepath.Join(d, "pcp"), filepath.Join(d, "ours")
		pr := run(slow, nil, "/usr/lib/pcp/bin/pmlogrewrite", "-c", sub, a, p)
		or := run(slow, nil, redact, a, o)
		if (pr.code == 0) != (or.code == 0) {
			t.Fatalf("pmlogrewrite exit %d (%s), our pmlogredact exit %d (%s)", pr.code, pr.stderr, or.code, or.stderr)
		}
		if pr.code != 0 {
			return
		}
		want := withoutIndex(redactDump(t, dumpOf(t, p, "-a", "-e")))
		got := withoutIndex(readLines(t, dumpOf(t, o, "-a", "-e")))
		for i := 0; i < len(want) || i < len(got); i++ {
			w, g := "(end)", "(end)"
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				t.Fatalf("pmdumplog -a -e line %d:\nwant %s\ngot  %s", i+1, w, g)
			}
		}
		if f := checkFindings(o); len(f) != len(checkFindings(p)) {
			t.Errorf("pmlogcheck: ours %v, PCP's rewrite %v", f, checkFindings(p))
		}
	})
}
