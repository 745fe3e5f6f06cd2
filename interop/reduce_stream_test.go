package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReduceStream (issues 11, 14): pcpreduce of a stream writes the
// archive pcpreduce ARCHIVE writes, with nothing spilled (TMPDIR names no
// directory), whether the stream came with its metadata up front (pcpcat
// ARCHIVE sends a METADATA frame) or brings it as it goes (pcpextract's
// stream has no frame: pcpreduce takes the metadata as it comes): the
// same dump (pcpcat -a) but for the temporal index's .meta offsets, which
// follow the context label's reduce_source, the archive's name or
// "standard input", and the pmlogger PID pcpextract puts in its label.
// Also with a window counted from the start.
func TestReduceStream(t *testing.T) {
	needPCP(t)
	type job struct {
		name   string
		window []string // -S/-T counted from the start: no spill either
	}
	jobs := []job{{"20130706", nil}, {"mark-bug", nil}, {"dyninsts", nil}, {"ok-mv-bar", nil}, {"interpmark", nil},
		{"20130706", []string{"-S", "2m", "-T", "20m"}}, {"interpmark", []string{"-T", "5m"}}}
	for _, j := range jobs {
		name := j.name
		a := filepath.Join(qaDir, name)
		dir := t.TempDir()
		direct, piped := filepath.Join(dir, "direct"), filepath.Join(dir, "piped")
		args := append(append([]string{"-q", "-t", "1m"}, j.window...), a, "-o", direct)
		if r := run(slow, nil, ours("pcpreduce"), args...); r.code != 0 {
			t.Fatalf("%s: %s", name, r.stderr)
		}
		dump := func(b string) string {
			r := run(slow, nil, ours("pcpcat"), "-a", b)
			if r.code != 0 {
				t.Fatalf("%s: %s", b, r.stderr)
			}
			s, _, _ := strings.Cut(r.stdout, "Temporal Index")
			return pmloggerPID.ReplaceAllString(strings.Replace(s, b, "OUT", -1), "PID for pmlogger: PID")
		}
		for _, producer := range []string{ours("pcpcat") + " " + a, ours("pcpextract") + " " + a + " -o -"} {
			for _, f := range []string{".0", ".meta", ".index"} {
				os.Remove(piped + f)
			}
			cmd := exec.Command("sh", "-c", producer+" | TMPDIR="+filepath.Join(dir, "absent")+" "+ours("pcpreduce")+" -t 1m "+strings.Join(j.window, " ")+" -o "+piped)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: through a pipe from %s: %v: %s", name, producer, err, out)
			}
			if w, g := dump(direct), dump(piped); w != g {
				t.Errorf("%s: reduced through a pipe from %s differs:\n%s", name, producer, sameDump(w, g, "direct", "piped"))
			}
			// --check finds what it finds in the direct output (some
			// inputs' descriptors have odd units, which a reduction keeps).
			rd, rp := run(slow, nil, ours("pcpcat"), "--check", direct), run(slow, nil, ours("pcpcat"), "--check", piped)
			norm := func(out, b string) string {
				return offsetWord.ReplaceAllString(strings.ReplaceAll(out, b, "OUT"), "offset")
			}
			if norm(rd.stdout+rd.stderr, direct) != norm(rp.stdout+rp.stderr, piped) || rd.code != rp.code {
				t.Errorf("%s: --check of the output piped from %s (exit %d):\n%s\nof the direct one (exit %d):\n%s", name, producer, rp.code, rp.stdout+rp.stderr, rd.code, rd.stdout+rd.stderr)
			}
		}
	}
}

// pmloggerPID is the label's pmlogger PID in a dump.
var pmloggerPID = regexp.MustCompile(`PID for pmlogger: [0-9]+`)

// offsetWord is an offset in a message: the .meta's shift by the length of
// reduce_source.
var offsetWord = regexp.MustCompile(`offset [0-9]+`)
