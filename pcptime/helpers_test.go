package pcptime

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Tests that compare with glibc or PCP need their tools and the PCP QA
// archives. Outside CI they skip when something is missing; with CI=true
// a missing prerequisite is a failure, so that a broken CI image cannot
// turn the comparisons into silent passes.

const qaArchives = "/var/lib/pcp/testsuite/archives"

func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not found: %v", name, err)
	}
	return p
}

func needArchive(t testing.TB, name string) string {
	t.Helper()
	p := qaArchives + "/" + name
	if _, err := os.Stat(p + ".meta"); err != nil {
		missing(t, "QA archive %s: %v", name, err)
	}
	return p
}

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// run executes a command with extra environment and returns stdout.
func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, stderr.String())
	}
	return string(out)
}
