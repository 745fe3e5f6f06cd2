package duckdb

import (
	"os"
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
