package format

// pmlogcheck's own words. Check words each finding twice: Msg in this
// package's manner (file, byte offset, what is wrong) for pcpcat --check,
// and PCP in PCP 6.0.3's pmlogcheck's, for pcpcat invoked as pmlogcheck,
// whose output PCP's QA suite and users' scripts compare word for word.
// PCPReport then replays pmlogcheck's run over the findings: the order it
// prints them in, where it stops, and its exit status.
//
// Designs rejected:
//   - Rewording Msg at print time (a table of patterns from our words to
//     pmlogcheck's): the two wordings carry different facts (byte offsets
//     here; record and entry numbers, volume numbers and the archive's base
//     name there), which only the code that found the problem has.
//   - One wording for both: pmlogcheck's says too little to find the
//     damage with a hex editor, ours breaks scripts written against PCP.

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/pcptools/pcptools/internal/pcphash"
)

// PCPEffect is what a finding does to a run of PCP 6.0.3's pmlogcheck.
type PCPEffect int

// Effects, from mild to fatal.
const (
	// PCPGoesOn: printed, and checking goes on; the exit status stays 0.
	PCPGoesOn PCPEffect = iota
	// PCPFails: damage pass 0 finds; pmlogcheck finishes pass 0, then
	// stops and exits 1.
	PCPFails
	// PCPNoOpen: libpcp refuses to open the archive after pass 0;
	// pmlogcheck says so, abandons the check and exits 1. Only the first
	// such finding is printed (libpcp stops at it).
	PCPNoOpen
	// PCPExits: pmlogcheck prints the finding and exits 1 at once.
	PCPExits
)

// libpcp's error strings (pmErrStr) that pmlogcheck's messages quote.
const (
	pcpErrLogRec  = "Corrupted record in a PCP archive log"                   // PM_ERR_LOGREC
	pcpErrLabel   = "Illegal label record at start of a PCP archive log file" // PM_ERR_LABEL
	pcpErrNoData  = "Empty archive log file"                                  // PM_ERR_NODATA
	pcpErrNoDesc  = "Metric not defined in the PCP archive log"
	pcpErrConvert = "Impossible value or scale conversion" // PM_ERR_CONV
)

// pcpLogMagic is PCP's archive label magic number without the version byte.
const pcpLogMagic = 0x50052600

// Line is the finding as pmlogcheck prints it: PCP where Check knows
// pmlogcheck's words for it, else the finding in pcpcat --check's words.
func (f Finding) Line() string {
	if f.PCP != "" {
		return f.PCP
	}
	if f.Offset >= 0 {
		return f.File + ": [offset " + strconv.FormatInt(f.Offset, 10) + "] " + f.Msg
	}
	return f.File + ": " + f.Msg
}

// PCPRun is a run of pmlogcheck 6.0.3 over one archive, replayed from
// Check's findings by PCPReport.
type PCPRun struct {
	// Pass0 are the lines pass 0 prints (on stderr), before the archive
	// is opened.
	Pass0 []string
	// Opened says whether libpcp opened the archive: only then does
	// pmlogcheck print the -l label and the "Note: timezone" line.
	Opened bool
	// Lines are what pmlogcheck prints (on stderr) once the archive is
	// open, or why it cannot be, in pmlogcheck's order.
	Lines []string
	// Failed is pmlogcheck's exit status 1.
	Failed bool
}

// PCPReport replays pmlogcheck's run over findings (as Check returns
// them): pass 0's lines; then either the first reason libpcp cannot open
// the archive (with libpcp's -Dlogmeta diagnostic first when logmeta is
// set) or passes 1 to 3, pass 2 in the order pmlogcheck walks its
// descriptors, up to the first finding pmlogcheck exits on.
func PCPReport(findings []Finding, logmeta bool) PCPRun {
	var run PCPRun
	var rest []Finding
	// Pass 0 takes the files in the order the directory lists them.
	// (Check orders findings by pass.)
	findings = slices.Clone(findings)
	p0 := 0
	for p0 < len(findings) && findings[p0].Pass == 0 {
		p0++
	}
	sort.SliceStable(findings[:p0], func(i, j int) bool { return findings[i].pcpRank < findings[j].pcpRank })
	for _, f := range findings {
		if f.Pass == 0 && f.PCPEffect != PCPNoOpen {
			if f.Severity == Info {
				continue // pmlogcheck -v's progress lines are not modelled
			}
			run.Pass0 = append(run.Pass0, f.Line())
			run.Failed = run.Failed || f.PCPEffect >= PCPFails
			if f.pcpNoOpen != "" {
				rest = append(rest, Finding{Pass: 0, Severity: Error, PCP: f.pcpNoOpen, PCPEffect: PCPNoOpen})
			}
			continue
		}
		rest = append(rest, f)
	}
	if run.Failed {
		return run
	}
	for _, f := range rest {
		if f.PCPEffect == PCPNoOpen {
			if logmeta && f.PCPDebug != "" {
				run.Lines = append(run.Lines, f.PCPDebug)
			}
			run.Lines = append(run.Lines, f.Line())
			run.Failed = true
			return run
		}
	}
	run.Opened = true
	sort.SliceStable(rest, func(i, j int) bool {
		if rest[i].Pass != rest[j].Pass {
			return rest[i].Pass < rest[j].Pass
		}
		return rest[i].pcpRank < rest[j].pcpRank
	})
	for _, f := range rest {
		if f.Severity == Info {
			continue
		}
		run.Lines = append(run.Lines, f.Line())
		if f.PCPEffect >= PCPFails {
			run.Failed = true
			if f.PCPEffect == PCPExits {
				break
			}
		}
	}
	return run
}

// hashWalkOrder returns, for keys added in this order to one of libpcp's
// hash tables, the position at which __pmHashWalk visits each (see
// internal/pcphash). pmlogcheck's pass 2 walks the descriptors that way,
// so its findings come in this order rather than in the order of the file.
func hashWalkOrder(keys []uint32) []int {
	var h pcphash.Hash[int]
	for i, k := range keys {
		h.Add(k, i)
	}
	pos := make([]int, len(keys))
	p := 0
	h.Walk(func(n *pcphash.Node[int]) {
		pos[n.Data] = p
		p++
	})
	return pos
}

// pcpDirOrder ranks the files of an archive as pmlogcheck 6.0.3's pass 0
// meets them: in the order its directory lists them (scandir(3) with no
// sorting), which is the file system's, not the alphabet's.
func pcpDirOrder(files []*archFile) map[string]int {
	rank := map[string]int{}
	if len(files) == 0 {
		return rank
	}
	dir := filepath.Dir(files[0].path)
	d, err := os.Open(dir)
	if err != nil {
		return rank
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	pos := make(map[string]int, len(names))
	for i, n := range names {
		pos[n] = i
	}
	for _, f := range files {
		if i, ok := pos[filepath.Base(f.path)]; ok {
			rank[f.path] = i
		}
	}
	return rank
}
