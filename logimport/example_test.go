package logimport_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/logimport"
	"github.com/pcptools/pcptools/stream"
)

// moverLog is the file-migration log of PCP's "Importing data and creating
// PCP archives": files moved (small, medium, large) and bytes moved
// (largest file) per 30 s.
const moverLog = `2010-07-04 13:46:29 14 files (6, 8, 0) 142512 bytes (92098)
2010-07-04 13:46:59 51 files (28, 23, 0) 132761 bytes (33239)
2010-07-04 13:47:29 36 files (23, 12, 1) 5733152 bytes (5688400)
2010-07-04 13:47:59 49 files (40, 9, 0) 118418 bytes (70669)
`

// mover imports moverLog as the document's mover2pcp does: counters for
// files and bytes, an instance domain for the file sizes, the times read
// in the archive's timezone.
func mover(base string) error {
	im, err := logimport.Create(base, logimport.Options{Version: 3, Hostname: "mover.example.com",
		Timezone: "UTC", NoSync: true, Overwrite: true})
	if err != nil {
		return err
	}
	count := stream.NewUnits(0, 0, 1, 0, 0, 0)
	bytes := stream.NewUnits(1, 0, 0, 0, 0, 0)
	sz := stream.NewInDomID(logimport.Domain, 0)
	for _, m := range []logimport.Metric{
		{Name: "mover.nfile", Type: stream.TypeU32, InDom: stream.InDomNull, Sem: stream.SemCounter, Units: count},
		{Name: "mover.nbyte", Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemCounter, Units: bytes},
		{Name: "mover.max_file_size", Type: stream.TypeU64, InDom: stream.InDomNull, Sem: stream.SemInstant, Units: bytes},
		{Name: "mover.nfile_by_size", Type: stream.TypeU32, InDom: sz, Sem: stream.SemCounter, Units: count},
	} {
		if _, err := im.AddMetric(m); err != nil {
			im.Abort()
			return err
		}
	}
	sizes := []string{"<=1Kbyte", "<=1Mbyte", ">1Mbyte"}
	var bySize [3]logimport.Handle
	for i, s := range sizes {
		if err := im.AddInstance(sz, s, int32(i)); err != nil {
			im.Abort()
			return err
		}
		bySize[i], _ = im.Handle("mover.nfile_by_size", s)
	}
	nfile, _ := im.Handle("mover.nfile", "")
	nbyte, _ := im.Handle("mover.nbyte", "")
	maxSize, _ := im.Handle("mover.max_file_size", "")
	var files, moved uint64
	var counts [3]uint64
	for _, line := range strings.Split(strings.TrimSpace(moverLog), "\n") {
		f := strings.Fields(strings.NewReplacer("(", "", ")", "", ",", "").Replace(line))
		t, err := time.ParseInLocation("2006-01-02 15:04:05", f[0]+" "+f[1], time.UTC)
		if err != nil {
			im.Abort()
			return err
		}
		var n [10]uint64
		for i := 2; i < 10; i++ {
			fmt.Sscan(f[i], &n[i])
		}
		files += n[2]
		moved += n[7]
		im.PutUint(nfile, files)
		im.PutUint(nbyte, moved)
		im.PutUint(maxSize, n[9])
		for i := range counts {
			counts[i] += n[4+i]
			im.PutUint(bySize[i], counts[i])
		}
		if err := im.WriteTime(t); err != nil {
			im.Abort()
			return err
		}
	}
	return im.End()
}

// The seed document's mover example, importing a log of file migrations.
func Example_mover() {
	dir, _ := os.MkdirTemp("", "mover")
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "mover")
	if err := mover(base); err != nil {
		fmt.Println(err)
		return
	}
	a, err := format.Open(base)
	if err != nil {
		fmt.Println(err)
		return
	}
	it := a.Records()
	defer it.Close()
	for it.Next() {
		switch r := it.At().(type) {
		case *stream.Label:
			fmt.Println("host", r.Hostname, "timezone", r.Timezone)
		case *stream.Desc:
			fmt.Println(r.Names[0], r.PMID, r.Type, r.Sem, r.Units)
		case *stream.Result:
			vs := r.VSets()
			n := 0
			for vs.Next() {
				n += vs.VSet().Values()
			}
			fmt.Println(r.T.Time().Format(time.TimeOnly), n, "values")
		}
	}
	// Output:
	// host mover.example.com timezone UTC
	// mover.nfile 245.0.1 U32 counter count
	// mover.nbyte 245.0.2 U64 counter byte
	// mover.max_file_size 245.0.3 U64 instant byte
	// mover.nfile_by_size 245.0.4 U32 counter count
	// 13:46:29 6 values
	// 13:46:59 6 values
	// 13:47:29 6 values
	// 13:47:59 6 values
}
