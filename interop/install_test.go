package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstall: scripts/install.sh (make install, make install-compat) into
// a temporary DESTDIR gives every tool a man page that man(1) renders, a
// bash completion that bash loads, zsh and fish completions, and a
// directory of symlinks under PCP's names that run our tools with PCP's
// command lines.
func TestInstall(t *testing.T) {
	needPCP(t)
	for _, p := range []string{"man", "bash"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required in CI: %v", p, err)
			}
			t.Skipf("no %s", p)
		}
	}
	dest := t.TempDir()
	r := run(time.Minute, nil, "../scripts/install.sh", "--bin", binDir, "--prefix", "/usr", "--destdir", dest, "--compat")
	if r.code != 0 {
		t.Fatalf("install.sh: %d %s%s", r.code, r.stdout, r.stderr)
	}
	root := filepath.Join(dest, "usr")
	tools := []string{"pcpcat", "pcpextract", "pcprewrite", "pcpreduce", "pcpsummary", "pcpimport", "pcpmmv", "pcpexport"}
	for _, tool := range tools {
		if _, err := os.Stat(filepath.Join(root, "bin", tool)); err != nil {
			t.Errorf("%s not installed: %v", tool, err)
		}
		man := run(time.Minute, nil, "env", "MANWIDTH=80", "man", "-l", filepath.Join(root, "share/man/man1", tool+".1"))
		if man.code != 0 || !strings.Contains(man.stdout, "NAME") || !strings.Contains(man.stdout, tool) {
			t.Errorf("man -l %s.1: %d %q %s", tool, man.code, firstLines(man.stdout, 5), man.stderr)
		}
		comp := filepath.Join(root, "share/bash-completion/completions", tool)
		b := run(time.Minute, nil, "bash", "-c", `source "$1" && complete -p "$2"`, "bash", comp, tool)
		if b.code != 0 || !strings.Contains(b.stdout, "complete ") || !strings.Contains(b.stdout, " -W ") {
			t.Errorf("bash completion of %s: %d %q %s", tool, b.code, b.stdout, b.stderr)
		}
		// --version on every tool (pcpmmv had none until the
		// twenty-third session), and --help with an example
		if v := run(time.Minute, nil, filepath.Join(root, "bin", tool), "--version"); v.code != 0 || !strings.HasPrefix(v.stdout, tool+" version ") {
			t.Errorf("%s --version: %d %q %s", tool, v.code, v.stdout, v.stderr)
		}
		if h := run(time.Minute, nil, filepath.Join(root, "bin", tool), "--help"); h.code != 0 || strings.Count(h.stdout, tool+" ") < 2 {
			t.Errorf("%s --help: %d %q %s", tool, h.code, firstLines(h.stdout, 8), h.stderr)
		}
		for _, f := range []string{"share/zsh/site-functions/_" + tool, "share/fish/vendor_completions.d/" + tool + ".fish"} {
			if b, err := os.ReadFile(filepath.Join(root, f)); err != nil || !strings.Contains(string(b), tool) {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	// The symlinks run ours, with PCP's command lines and output.
	compat := filepath.Join(root, "lib/pcptools/pcp")
	a := filepath.Join(qaDir, "20041125")
	for _, c := range [][]string{
		{"pmdumplog", "-l", a},
		{"pmlogcheck", a},
		{"pmlogsummary", "-a", a, "kernel.all.load"},
	} {
		want := run(time.Minute, nil, "env", append([]string{"TZ=UTC", "/usr/bin/" + c[0]}, c[1:]...)...)
		got := run(time.Minute, nil, "env", append([]string{"TZ=UTC", filepath.Join(compat, c[0])}, c[1:]...)...)
		if got.code != want.code || got.stdout != want.stdout {
			t.Errorf("%s: ours %d %q, PCP's %d %q", strings.Join(c, " "), got.code, firstLines(got.stdout, 3), want.code, firstLines(want.stdout, 3))
		}
	}
	for _, name := range []string{"pmlogdump", "pmlogextract", "pmlogrewrite", "pmlogredact", "pmlogreduce"} {
		if _, err := os.Stat(filepath.Join(compat, name)); err != nil {
			t.Errorf("no %s symlink: %v", name, err)
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
