package main

// pmlogsummary's usage text, which under its name is printed as it is
// (%s is the program's name).
const usageText = `Usage: %s [options] archive [metricname ...]

Options:
  -a, --all             print all information (equivalent to -blmMy)
  -b                    print both stochastic and time averages for counter metrics
  -B N, --bins=N        print value distribution across a number of bins
  -f                    print using "spreadsheet" format (tab delimited fields)
  -F                    print using "spreadsheet" format (comma separated values)
  -H, --header          print one-line header at start showing each column
  -i, --mintime         also print timestamp for minimum value
  -I, --maxtime         also print timestamp for maximum value
  -l, --label           also print the archive label and time window
  -m, --minimum         also print minimum value
  -M, --maximum         also print maximum value
  -N                    suppress warnings from individual archive fetches (default)
  -p N, --precision=N   number of digits to display after the decimal point
  -s, --sum             only print the sum of all values of each metric
  -S TIME, --start=TIME start of the time window
  -T TIME, --finish=TIME end of the time window
  -v, --verbose         verbose, enable warnings from individual archive fetches
  -x                    print only stochastic averages for counter metrics
  -y, --samples         print sample count for each metric
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -V, --version         display version number and exit
  -?, --help            show this usage message and exit
`

// ownUsage adds what pcpsummary does beyond pmlogsummary.
const ownUsage = `      --json            print one JSON object per metric and instance (docs/pcpsummary.md)
      --csv             print a CSV header and one row per metric and instance
      --percentiles=LIST
                        with --json or --csv, add these percentiles (e.g. 50,90,99; 1% relative accuracy)
      --shape           after the summary, the archive's shape: bytes (as pmlogsize -d counts them),
                        results, values, instances and churn per metric and instance domain
  -q, --quiet           no progress display (shown when standard error is a terminal)
      --folio           the archives named (folios, directories, archives) are many hosts':
                        one summary per host, hosts in parallel, in the order of their names
      --fleet           with --folio, then one line per metric and instance over every host:
                        mean and total of the hosts' averages, lowest and highest value and where

With no archive, or "-" (before metric names: pcpcat A | pcpsummary - kernel.all.load),
pcpsummary reads a record stream from another pcp* tool on standard input.
`
