package pcptime

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The oracle is libpcp itself: a small Python script calls PCP 6.0.3's
// pmNewZone, pmParseHighResTimeWindow and pmParseHighResInterval through
// ctypes, one JSON request per line. All requests run in one process, as
// a PCP tool's calls do, so that glibc state that carries from call to
// call (mktime's remembered offset) is exercised too; the Go side keeps a
// single timeParser across the same sequence.
const oracleScript = `
import ctypes, json, sys
lib = ctypes.CDLL("libpcp.so.3")
class TS(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
P = ctypes.POINTER
lib.pmNewZone.argtypes = [ctypes.c_char_p]
lib.pmParseHighResTimeWindow.argtypes = [ctypes.c_char_p]*4 + [P(TS)]*5 + [P(ctypes.c_char_p)]
lib.pmParseHighResInterval.argtypes = [ctypes.c_char_p, P(TS), P(ctypes.c_char_p)]
def b(s):
    return None if s is None or s == "" else s.encode()
for line in sys.stdin:
    r = json.loads(line)
    if r.get("tz"):
        lib.pmNewZone(r["tz"].encode())
    e = ctypes.c_char_p()
    if r["op"] == "interval":
        t = TS()
        sts = lib.pmParseHighResInterval(r["s"].encode(), ctypes.byref(t), ctypes.byref(e))
        out = {"sts": sts, "start": [t.tv_sec, t.tv_nsec]}
    else:
        ls, le = TS(*r["ls"]), TS(*r["le"])
        s, en, o = TS(), TS(), TS()
        sts = lib.pmParseHighResTimeWindow(b(r["S"]), b(r["T"]), b(r["A"]), b(r["O"]),
            ctypes.byref(ls), ctypes.byref(le), ctypes.byref(s), ctypes.byref(en), ctypes.byref(o), ctypes.byref(e))
        out = {"sts": sts, "start": [s.tv_sec, s.tv_nsec], "end": [en.tv_sec, en.tv_nsec], "origin": [o.tv_sec, o.tv_nsec]}
    print(json.dumps(out), flush=True)
`

type oracleReq struct {
	Op string   `json:"op"`
	TZ string   `json:"tz,omitempty"`
	S  string   `json:"S,omitempty"` // also the interval for op "interval"
	T  string   `json:"T,omitempty"`
	O  string   `json:"O,omitempty"`
	A  string   `json:"A,omitempty"`
	LS [2]int64 `json:"ls"`
	LE [2]int64 `json:"le"`
}

type oracleResp struct {
	Sts    int      `json:"sts"`
	Start  [2]int64 `json:"start"`
	End    [2]int64 `json:"end"`
	Origin [2]int64 `json:"origin"`
}

// askPCP runs the requests through libpcp and returns its answers.
func askPCP(t *testing.T, reqs []oracleReq) []oracleResp {
	t.Helper()
	py := needTool(t, "python3")
	var in strings.Builder
	enc := json.NewEncoder(&in)
	for _, r := range reqs {
		m := map[string]any{"op": r.Op, "tz": r.TZ, "ls": r.LS, "le": r.LE,
			"S": r.S, "T": r.T, "O": r.O, "A": r.A}
		if r.Op == "interval" {
			m["s"] = r.S
		}
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-c", oracleScript)
	cmd.Stdin = strings.NewReader(in.String())
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(ee.Stderr), "libpcp") {
			missing(t, "libpcp oracle: %s", ee.Stderr)
		}
		t.Fatalf("libpcp oracle: %v", err)
	}
	var resps []oracleResp
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var r oracleResp
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("oracle output %q: %v", sc.Text(), err)
		}
		resps = append(resps, r)
	}
	if len(resps) != len(reqs) {
		t.Fatalf("oracle answered %d of %d requests", len(resps), len(reqs))
	}
	return resps
}
