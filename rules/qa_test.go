package rules

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/format"
)

var update = flag.Bool("update", false, "rerun PCP's pmlogrewrite -C and rewrite testdata/*.golden")

const (
	testsuite   = "/var/lib/pcp/testsuite"
	pcpRewrite  = "/usr/lib/pcp/bin/pmlogrewrite"
	stockConfig = "/var/lib/pcp/config/pmlogrewrite"
)

// needFixtures skips (or, under CI=true, fails) when PCP's files are absent.
func needFixtures(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("fixture missing: %v", err)
			}
			t.Skipf("fixture missing: %v", err)
		}
	}
}

func TestStockConfigsParse(t *testing.T) {
	needFixtures(t, stockConfig)
	ents, _ := os.ReadDir(stockConfig)
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		n++
		if _, err := LoadPmlogrewrite(filepath.Join(stockConfig, e.Name())); err != nil {
			t.Errorf("%v", err)
		}
	}
	if n != 21 {
		t.Errorf("%d stock files, want 21", n)
	}
	cfg, err := LoadPmlogrewrite(stockConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Metrics) != 766 || len(cfg.InDoms) != 4 {
		t.Errorf("got %d metric rules, %d indom rules; want 766, 4", len(cfg.Metrics), len(cfg.InDoms))
	}
	// and they compile against an archive
	meta := loadMeta(t, "rattle")
	if _, err := Compile(cfg, meta, CompileOptions{}); err != nil {
		t.Errorf("compile stock rules against rattle: %v", err)
	}
}

type qaCase struct {
	name    string // script:line, or own:N
	config  string
	archive string
	version int
}

var (
	heredocRE = regexp.MustCompile(`^\s*cat\s*<<\s*(['"]?)([A-Za-z][A-Za-z0-9_-]*)['"]?\s*>\s*(\S+)\s*$`)
	archRE    = regexp.MustCompile(`archives/([A-Za-z0-9_.-]+)`)
	versionRE = regexp.MustCompile(`-V\s*([23])`)
)

// qaHeredocs collects the configurations that PCP's QA scripts write with
// a here-document and then pass to pmlogrewrite -c, reading the scripts in
// place. Here-documents that the shell would expand are skipped.
func qaHeredocs(t *testing.T) []qaCase {
	files, _ := filepath.Glob(filepath.Join(testsuite, "[0-9]*"))
	var out []qaCase
	for _, f := range files {
		if strings.HasSuffix(f, ".out") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "pmlogrewrite") {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			m := heredocRE.FindStringSubmatch(lines[i])
			if m == nil || !(strings.Contains(string(b), "-c "+m[3]) || strings.Contains(string(b), "-c"+m[3])) {
				continue
			}
			quoted, delim, target := m[1] != "", m[2], m[3]
			var body []string
			j := i + 1
			for ; j < len(lines) && lines[j] != delim; j++ {
				body = append(body, lines[j])
			}
			text := strings.Join(body, "\n") + "\n"
			start := i + 1
			i = j
			if !quoted && (strings.ContainsAny(text, "$`") || strings.Contains(text, `\`)) {
				continue
			}
			// the pmlogrewrite run that uses it: the next one naming target
			arch, ver := "", 0
			for k := j + 1; k < len(lines) && k < j+15; k++ {
				if heredocRE.MatchString(lines[k]) {
					break
				}
				l := lines[k]
				if strings.Contains(l, "pmlogrewrite") && strings.Contains(l, "-c") && strings.Contains(l, target) {
					if am := archRE.FindStringSubmatch(l); am != nil {
						arch = am[1]
					}
					if vm := versionRE.FindStringSubmatch(l); vm != nil {
						fmt.Sscan(vm[1], &ver)
					}
					break
				}
			}
			if arch == "" {
				// the run is in a shell function: use the script's archive
				for _, l := range lines {
					if strings.Contains(l, "pmlogrewrite") {
						if am := archRE.FindStringSubmatch(l); am != nil {
							arch = am[1]
							break
						}
					}
				}
			}
			if arch == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(testsuite, "archives", arch+".meta")); err != nil {
				continue
			}
			out = append(out, qaCase{name: fmt.Sprintf("%s:%d", filepath.Base(f), start), config: text, archive: arch, version: ver})
		}
	}
	return out
}

func loadMeta(t *testing.T, arch string) *format.Metadata {
	t.Helper()
	a, err := format.Open(filepath.Join(testsuite, "archives", arch))
	if err != nil {
		t.Fatalf("open %s: %v", arch, err)
	}
	m, err := a.Meta()
	if err != nil {
		t.Fatalf("meta %s: %v", arch, err)
	}
	return m
}

// pcpVerdict runs PCP's pmlogrewrite -C on a configuration.
func pcpVerdict(t *testing.T, c qaCase) (bool, string) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	os.WriteFile(conf, []byte(c.config), 0o644)
	args := []string{"-C"}
	if c.version != 0 {
		args = append(args, "-V", fmt.Sprint(c.version))
	}
	args = append(args, "-c", conf, filepath.Join(testsuite, "archives", c.archive), filepath.Join(dir, "out"))
	out, err := exec.Command(pcpRewrite, args...).CombinedOutput()
	return err == nil, string(out)
}

func ourVerdict(t *testing.T, c qaCase, metas map[string]*format.Metadata) (bool, error) {
	cfg, err := ParsePmlogrewrite(c.name, c.config)
	if err != nil {
		return false, err
	}
	m := metas[c.archive]
	if m == nil {
		m = loadMeta(t, c.archive)
		metas[c.archive] = m
	}
	_, err = Compile(cfg, m, CompileOptions{OutputVersion: c.version})
	return err == nil, err
}

func runGolden(t *testing.T, golden string, cases []qaCase) {
	path := filepath.Join("testdata", golden)
	if *update {
		needFixtures(t, pcpRewrite)
		var b strings.Builder
		for _, c := range cases {
			ok, _ := pcpVerdict(t, c)
			fmt.Fprintf(&b, "%s %v\n", c.name, map[bool]string{true: "ok", false: "error"}[ok])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 2 {
			want[fs[0]] = fs[1] == "ok"
		}
	}
	f.Close()
	metas := map[string]*format.Metadata{}
	agree := 0
	for _, c := range cases {
		w, ok := want[c.name]
		if !ok {
			t.Errorf("%s: not in %s (rerun with -update)", c.name, golden)
			continue
		}
		got, err := ourVerdict(t, c, metas)
		if got != w {
			t.Errorf("%s (%s): pmlogrewrite says ok=%v, we say ok=%v (%v)\n%s", c.name, c.archive, w, got, err, c.config)
			continue
		}
		agree++
	}
	t.Logf("%d of %d configurations: same verdict as pmlogrewrite -C", agree, len(cases))
}

func TestQAHeredocs(t *testing.T) {
	needFixtures(t, testsuite)
	cases := qaHeredocs(t)
	if len(cases) < 40 {
		t.Fatalf("only %d QA here-documents found", len(cases))
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	runGolden(t, "qa_heredocs.golden", cases)
}

func TestOwnCases(t *testing.T) {
	needFixtures(t, filepath.Join(testsuite, "archives", "src-rattle.meta"))
	b, err := os.ReadFile(filepath.Join("testdata", "own_cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []qaCase
	for i, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		cases = append(cases, qaCase{name: fmt.Sprintf("own:%d", i+1), config: l + "\n", archive: "src-rattle"})
	}
	runGolden(t, "own_cases.golden", cases)
}
