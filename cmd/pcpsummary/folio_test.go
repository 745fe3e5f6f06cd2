package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pcptools/pcptools/folio"
	"github.com/pcptools/pcptools/internal/example"
)

// TestFolio: with --folio, each host's archives are summarised as one
// context, exactly as the same archives named as a comma-separated list
// are; hosts come in name order, marked in each output form; a host that
// fails is reported and the others still come out.
func TestFolio(t *testing.T) {
	in := t.TempDir()
	var hosts [][]string
	for _, h := range []string{"beta", "alpha"} {
		b, err := example.WriteHalves(in, h)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, b)
	}
	summarise := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"pcpsummary"}, args...), nil, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	one := func(bases []string, args ...string) string {
		out, errs, code := summarise(append(args, strings.Join(bases, ","))...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	alpha, beta := hosts[1], hosts[0]

	out, errs, code := summarise("--folio", "-a", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "host alpha:\n" + one(alpha, "-a") + "\nhost beta:\n" + one(beta, "-a") + "\n"
	if out != want {
		t.Errorf("text:\n%s\nwant:\n%s", out, want)
	}

	// JSON: every object names its host, and is otherwise the host's own.
	out, _, code = summarise("--folio", "--json", filepath.Join(in, "alpha"), filepath.Join(in, "beta"), "kernel.all.load")
	if code != 0 {
		t.Fatalf("json: exit %d", code)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		host, _ := o["host"].(string)
		got = append(got, host+" "+strings.Replace(line, `"host":"`+host+`",`, "", 1))
	}
	var wantJSON []string
	for _, h := range []struct {
		name  string
		bases []string
	}{{"alpha", alpha}, {"beta", beta}} {
		lines := strings.Split(strings.TrimSuffix(oneWith(t, h.bases, "--json"), "\n"), "\n")
		for _, l := range lines {
			wantJSON = append(wantJSON, h.name+" "+l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(wantJSON, "\n") {
		t.Errorf("json:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantJSON, "\n"))
	}

	// CSV: one header, a host column.
	out, _, code = summarise("--folio", "--csv", in)
	if code != 0 {
		t.Fatalf("csv: exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "host,metric,") || strings.Count(out, "host,metric,") != 1 {
		t.Errorf("csv header: %q", lines[0])
	}
	a := strings.Split(strings.TrimSuffix(one(alpha, "--csv"), "\n"), "\n")
	if len(lines) != 1+2*(len(a)-1) || lines[1] != "alpha,"+a[1] || lines[len(a)] != "beta,"+a[1] {
		t.Errorf("csv rows:\n%s", out)
	}

	// A folio file naming one host's archives.
	f := filepath.Join(t.TempDir(), "beta.folio")
	fh, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := folio.Write(fh, &folio.Folio{Creator: "test", Archives: []folio.Archive{{Host: "beta", Path: beta[0]}, {Host: "beta", Path: beta[1]}}}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if out, errs, code := summarise("--folio", f); code != 0 || out != "host beta:\n"+one(beta)+"\n" {
		t.Errorf("folio file: exit %d, %s\n%s", code, errs, out)
	}

	// The summary's own warnings name their host (hosts run at once):
	// "PMNS traversal failed" said nothing of which host until the
	// twenty-third session.
	if _, errs, code := summarise("--folio", in, "no.such.metric"); code == 0 ||
		!strings.Contains(errs, "pcpsummary: host alpha: PMNS traversal failed for no.such.metric") ||
		!strings.Contains(errs, "pcpsummary: host beta: PMNS traversal failed for no.such.metric") {
		t.Errorf("unknown name in a folio: exit %d, stderr %q", code, errs)
	}

	// A bad host is reported; the others come out; the status says so.
	bad := filepath.Join(in, "gamma")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "x.meta"), []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := summarise("--folio", in); code == 0 || !strings.Contains(errs, "x.meta") {
		t.Errorf("exit %d, stderr %q: want a failure naming the bad archive", code, errs)
	}
}

// oneWith summarises a host's archives with args and the metric kernel.all.load.
func oneWith(t *testing.T, bases []string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append(append([]string{"pcpsummary"}, args...), strings.Join(bases, ","), "kernel.all.load"), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return stdout.String()
}

// TestFleet: --fleet's lines are what the hosts' own JSON objects give:
// the mean and sum of their time averages, the lowest minimum and the
// highest maximum, over the hosts that have each metric and instance.
func TestFleet(t *testing.T) {
	in := t.TempDir()
	var all [][]string
	for _, h := range []string{"alpha", "beta"} {
		b, err := example.WriteHalves(in, h)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	type agg struct {
		hosts         int
		sum, min, max float64
	}
	want := map[string]*agg{}
	for _, bases := range all {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"pcpsummary", "--json", strings.Join(bases, ",")}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			var o map[string]any
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatal(err)
			}
			if o["insufficient"] == true {
				continue
			}
			k := fmt.Sprint(o["metric"], "|", o["instance"], "|", o["units"])
			a := want[k]
			avg, lo, hi := o["time_average"].(float64), o["min"].(float64), o["max"].(float64)
			if a == nil {
				a = &agg{min: lo, max: hi}
				want[k] = a
			}
			a.hosts++
			a.sum += avg
			a.min, a.max = min(a.min, lo), max(a.max, hi)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"pcpsummary", "--folio", "--fleet", "--json", in}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rows := 0
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		if o["fleet"] != true {
			continue
		}
		rows++
		k := fmt.Sprint(o["metric"], "|", o["instance"], "|", o["units"])
		a := want[k]
		if a == nil {
			t.Errorf("%s: a fleet line for what no host has", k)
			continue
		}
		if o["hosts"].(float64) != float64(a.hosts) || o["total"].(float64) != a.sum ||
			o["mean"].(float64) != a.sum/float64(a.hosts) || o["min"].(float64) != a.min || o["max"].(float64) != a.max {
			t.Errorf("%s: %s; want hosts %d total %g min %g max %g", k, line, a.hosts, a.sum, a.min, a.max)
		}
	}
	if rows != len(want) || rows == 0 {
		t.Errorf("%d fleet lines, want %d", rows, len(want))
	}
	// Text: the section follows the hosts' summaries.
	stdout.Reset()
	if code := run([]string{"pcpsummary", "--folio", "--fleet", in, "kernel.all.load"}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "\nfleet (2 hosts):\nkernel.all.load [\"1 minute\"] 2 hosts: mean ") {
		t.Errorf("text:\n%s", stdout.String())
	}
	// --fleet alone, or with --csv, is refused.
	for _, args := range [][]string{{"--fleet", in}, {"--folio", "--fleet", "--csv", in}} {
		stderr.Reset()
		if code := run(append([]string{"pcpsummary"}, args...), nil, io.Discard, &stderr); code == 0 || !strings.Contains(stderr.String(), "--fleet") {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
	}
}
