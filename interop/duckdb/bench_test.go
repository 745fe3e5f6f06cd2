package duckdb

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHourlyMeanQuery is run by scripts/bench-export.sh: it times DuckDB's
// hourly mean of one metric over the Parquet file named by
// PCPTOOLS_EXPORT_BENCH_PARQUET (metric: PCPTOOLS_EXPORT_BENCH_METRIC) and
// logs it; without the variable it skips. It asserts no time: it checks
// that the query finds rows.
func TestHourlyMeanQuery(t *testing.T) {
	path := os.Getenv("PCPTOOLS_EXPORT_BENCH_PARQUET")
	if path == "" {
		t.Skip("PCPTOOLS_EXPORT_BENCH_PARQUET not set (scripts/bench-export.sh sets it)")
	}
	metric := os.Getenv("PCPTOOLS_EXPORT_BENCH_METRIC")
	if metric == "" {
		metric = "kernel.all.load"
	}
	db := openDB(t)
	q := `select date_trunc('hour', "time") as h, avg(value) from read_parquet(?)
		where metric = ? group by h order by h`
	for run := 0; run < 3; run++ {
		start := time.Now()
		rows, err := db.Query(q, path, metric)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		el := time.Since(start)
		if n == 0 {
			t.Fatalf("no hours for %s in %s", metric, path)
		}
		t.Logf("hourly mean of %s: %d hours in %.3f s", metric, n, el.Seconds())
	}
}

// TestWideLayout is the measurement behind the long table (docs/export.md,
// "Long or wide"): DuckDB pivots the long file named by
// PCPTOOLS_EXPORT_BENCH_PARQUET into a wide one (a row per time, a column
// per metric-instance), writes it as zstd Parquet, and the test logs both
// files' sizes and the time of one series' hourly mean over each. Without
// the variable it skips; it asserts no time.
func TestWideLayout(t *testing.T) {
	path := os.Getenv("PCPTOOLS_EXPORT_BENCH_PARQUET")
	if path == "" || os.Getenv("PCPTOOLS_EXPORT_WIDE") == "" {
		t.Skip("PCPTOOLS_EXPORT_BENCH_PARQUET and PCPTOOLS_EXPORT_WIDE not set")
	}
	db := openDB(t)
	wide := filepath.Join(t.TempDir(), "wide.parquet")
	start := time.Now()
	if _, err := db.Exec(fmt.Sprintf(`create table w as pivot (select "time", metric || coalesce('[' || instance || ']', '') as col, value
		from read_parquet('%s')) on col using first(value) group by "time"`, path)); err != nil {
		t.Fatal(err)
	}
	var cols int
	if err := db.QueryRow(`select count(*) from information_schema.columns where table_name = 'w'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`copy w to '%s' (format parquet, compression zstd)`, wide)); err != nil {
		t.Fatal(err)
	}
	t.Logf("pivot and write: %.1f s, %d columns", time.Since(start).Seconds(), cols)
	var metric, inst string
	if err := db.QueryRow(`select metric, instance from read_parquet(?) where instance is not null and value is not null limit 1`, path).Scan(&metric, &inst); err != nil {
		t.Fatal(err)
	}
	col := metric + "[" + inst + "]"
	for _, f := range []string{path, wide} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		q := `select date_trunc('hour', "time") as h, avg(value) from read_parquet(?) where metric = ? and instance = ? group by h order by h`
		args := []any{f, metric, inst}
		if f == wide {
			q = fmt.Sprintf(`select date_trunc('hour', "time") as h, avg("%s") from read_parquet(?) group by h order by h`, col)
			args = []any{f}
		}
		for run := 0; run < 3; run++ {
			start := time.Now()
			rows, err := db.Query(q, args...)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			t.Logf("%s: %d bytes; hourly mean of %s: %d hours in %.3f s", filepath.Base(f), st.Size(), col, n, time.Since(start).Seconds())
		}
	}
}
