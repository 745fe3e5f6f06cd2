package interop

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalLeavesNothing (issue 14): a tool ended by a signal leaves no
// temporary file behind. pcpcat -o, killed (SIGTERM, SIGINT, SIGHUP)
// while it waits for the rest of a stream, has its output's temporary
// files in the output's directory and removes them before it dies of the
// signal; a consumer that exits early (head) ends pcpcat --json, which
// spilled a stream without a METADATA frame to $TMPDIR, by SIGPIPE, and
// the scratch archive goes too, with nothing said on standard error.
func TestSignalLeavesNothing(t *testing.T) {
	needPCP(t)
	a := filepath.Join(qaDir, "20041125")
	full := run(slow, nil, ours("pcpcat"), a)
	if full.code != 0 {
		t.Fatalf("pcpcat %s: %s", a, full.stderr)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if signal.Ignored(sig) {
			// inherited ignored (under nohup): the tool rightly
			// leaves it so
			t.Logf("%v: ignored by this process, so by the tool too: not tried", sig)
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(ours("pcpcat"), "-o", filepath.Join(dir, "out"))
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Half the stream, and no end: pcpcat waits for more with its
		// output's temporary files open.
		if _, err := in.Write([]byte(full.stdout[:len(full.stdout)/2])); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			left, _ := filepath.Glob(filepath.Join(dir, ".*"))
			if len(left) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: pcpcat -o made no temporary file in a minute", sig)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		in.Close()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if err == nil || !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: pcpcat -o ended with %v (%v), want death by the signal", sig, err, ws)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
			t.Errorf("%v: left behind %v", sig, left)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
			t.Errorf("%v: left behind %v", sig, left)
		}
	}

	conf := filepath.Join(t.TempDir(), "host.conf")
	if err := os.WriteFile(conf, []byte("global { hostname -> \"late.example\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	line := ours("pcprewrite") + " -c " + conf + " " + a + " | TMPDIR=" + tmp + " " + ours("pcpcat") +
		" --json 2>" + filepath.Join(tmp, "..", "stderr") + "; echo ${PIPESTATUS[1]} >" + filepath.Join(tmp, "..", "status")
	r := run(slow, nil, "bash", "-c", "("+line+") | head -c 100 >/dev/null")
	if r.code != 0 {
		t.Fatalf("%s: exit %d, %s", line, r.code, r.stderr)
	}
	status, _ := os.ReadFile(filepath.Join(tmp, "..", "status"))
	msg, _ := os.ReadFile(filepath.Join(tmp, "..", "stderr"))
	if got := strings.TrimSpace(string(status)); got != "141" || len(msg) > 0 {
		t.Errorf("pcpcat --json whose reader left: exit %s, stderr %q; want 141 (SIGPIPE) and nothing said", got, msg)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("pcpcat --json whose reader left: the scratch archive is still there: %v", left)
	}
}

// TestSignalEndsRecording: pcpmmv record stops on SIGINT or SIGTERM and
// finishes its archive (the signal handler that removes temporary files
// leaves these two to it): exit 0, and an archive pcpcat --check passes.
func TestSignalEndsRecording(t *testing.T) {
	needPCP(t)
	files := mmvFixtures(t)
	dir := filepath.Dir(files[0])
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		out := filepath.Join(t.TempDir(), "rec")
		cmd := exec.Command(ours("pcpmmv"), "record", "-t", "100ms", "-s", "1000", dir, "-o", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond)
		cmd.Process.Signal(sig)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: pcpmmv record ended with %v: %s", sig, err, stderr.String())
			continue
		}
		if r := run(time.Minute, nil, ours("pcpcat"), "--check", out); r.code != 0 {
			t.Errorf("%v: the recording does not pass --check: %s%s", sig, r.stdout, r.stderr)
		}
	}
}

// TestReaderLeaves: a tool whose reader exits early (TOOL A | head -1)
// dies of SIGPIPE and says nothing, as PCP's tools do; pcpsummary said
// "write /dev/stdout: broken pipe" until the twenty-third session.
func TestReaderLeaves(t *testing.T) {
	needPCP(t)
	// outputs of 128 KiB to 1.8 MiB, past the pipe's buffer, in well
	// under a second each
	a := filepath.Join(qaDir, "20101004-trunc")
	for _, c := range []string{
		ours("pcpsummary") + " " + a,
		ours("pcpsummary") + " --json " + a,
		ours("pcpcat") + " -m " + a,
		ours("pcpcat") + " --csv " + a,
		ours("pcpexport") + " --openmetrics " + a,
	} {
		r := run(slow, nil, "bash", "-c", "("+c+"; echo $? >&2) | head -1 >/dev/null")
		if strings.TrimSpace(r.stderr) != "141" {
			t.Errorf("%s | head -1: stderr (with the exit status last) %q, want 141 and nothing said", c, r.stderr)
		}
	}
}
