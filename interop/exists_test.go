package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExistingOutputWords (issue 18): under PCP's names, a tool whose
// output archive exists says what PCP's says (libpcp's __pmLogNewFile
// naming the first of .index, .meta and .0 it finds, then the tool's
// __pmLogCreate line) and exits as it does, whichever of the files exist;
// the existing files are left as they were.
func TestExistingOutputWords(t *testing.T) {
	needPCP(t)
	in := filepath.Join(qaDir, "ok-foo")
	tools := []struct {
		name string
		args []string
	}{
		{"pmlogextract", nil},
		{"pmlogrewrite", nil},
		{"pmlogrewrite", []string{"-V", "3"}},
		{"pmlogreduce", nil},
	}
	for _, files := range [][]string{{".0", ".meta", ".index"}, {".0"}, {".0", ".meta"}} {
		for _, tool := range tools {
			var got [2]string
			for i, bin := range []string{pcpTool(t, tool.name), ours(tool.name)} {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				for _, f := range files {
					if err := os.WriteFile(out+f, []byte("keep"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				r := run(slow, nil, bin, append(append([]string{}, tool.args...), in, out)...)
				got[i] = strings.ReplaceAll(r.stdout+r.stderr, dir, "DIR") + "exit " + string(rune('0'+r.code))
				for _, f := range files {
					if b, _ := os.ReadFile(out + f); string(b) != "keep" {
						t.Errorf("%s %v with %v existing: %s was changed", bin, tool.args, files, f)
					}
				}
			}
			if got[0] != got[1] {
				t.Errorf("%s %v with %v existing:\nours:\n%s\nPCP's:\n%s", tool.name, tool.args, files, got[1], got[0])
			}
		}
	}
}

// pcpTool is the path of one of PCP's tools: on PATH, or in PCP's
// binadm directory.
func pcpTool(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/lib/pcp/bin", "/usr/libexec/pcp/bin") {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && !strings.HasPrefix(p, binDir) {
			return p
		}
	}
	t.Fatalf("PCP's %s is not installed", name)
	return ""
}
