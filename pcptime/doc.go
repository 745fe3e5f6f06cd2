// Package pcptime gives the toolkit PCP's handling of time zones, time
// formats and time-window options, so that a dump prints times character
// for character as pmdumplog 6.0.3 does and -S/-T/-O/-A accept what PCP
// users type, with the same meaning.
//
//	archive label ──ZoneForLabel──┐
//	-Z tz ─────────NewZone────────┼─▶ *time.Location ─▶ FormatTime / FormatDate (dumps)
//	neither ───────Local──────────┘          │
//	-S -T -O -A ───────────────ParseWindow ◀─┘──▶ Window{Start, End, Origin}
//
// # Zones
//
// Which zone a PCP tool reports in (libpcp's pmGetContextOptions): -z uses
// the archive label's timezone string, -Z tz uses tz, neither uses the
// local zone ($TZ, else /etc/localtime); -z and -Z together are an error.
// PCP reads $PCP_HOSTZONE and $PCP_TIMEZONE as defaults for -z and -Z.
// ChooseZone encodes these rules.
//
// For -z, PCP 6.0.3 (and 7.x) uses the label's timezone field only
// ("AEST-10"), never the v3 zoneinfo field (":Australia/Melbourne"), which
// pmdumplog -L merely prints: verified by rewriting the zoneinfo of a copy
// of omnibus_v3 to :America/New_York, which changed no output. The two
// differ whenever the archive spans a DST change, since pmlogger records
// the offset in force at its start ("AEDT-11") without rules.
//
// Timezone strings are read as glibc reads $TZ (LoadZone): a zoneinfo
// file if one exists by that name (":Name", "Name", an absolute path; so
// "EST5EDT" and "UTC" are files, with their history), otherwise a POSIX
// rule, std offset [dst [offset] [,start[/time],end[/time]]] with Jn, n
// and Mm.w.d dates and <quoted> names. On top of that PCP's pmNewZone
// appends "+0" to any three-character string (NewZone), so "-Z EST", or a
// label saying "EST", means UTC, not New York. A rule becomes a
// *time.Location through a synthesized TZif file: the transitions glibc
// would compute for 1900-2299, explicitly, and the rule as the footer for
// later years. LoadZone was compared with glibc's date(1) at 830,000
// instants over 46 zone strings (about 22,000 per rule string, from 1902
// to 2045 and around every transition), and ZoneForLabel with pmdumplog
// -z on the QA archives, one per distinct label timezone.
//
// glibc quirks reproduced: the DST state is decided by the rules of the
// instant's UTC year, so a DST period ending after 31 December (UTC) stops
// there; for UTC years up to 1970 the rules are evaluated as if the year
// began on 1970-01-01, so earlier instants are always standard time in the
// northern hemisphere and always daylight time in the southern; offsets
// are clamped to 24:59:59.
//
// A DST name with no rule ("EST-10EDT", "AEST-10AEDT") makes glibc borrow
// the transitions of the zoneinfo file "posixrules" (New York's) moved to
// the given offsets, and New York's own rule, names and offsets after
// 2037. glibc 2.36 is not consistent here: the shift it applies to the
// end-of-DST transitions depends on what the process did before. We
// follow what date(1), and any PCP tool running with $TZ unset on a host
// whose local zone has no transitions, print (the start of DST moves by
// the difference of standard offsets, its end by the DST offset itself);
// a PCP tool run with $TZ set, or on a host whose local zone has DST,
// leaves the end of DST at New York's UTC instant instead. Without a
// posixrules file the rule is M3.2.0,M11.1.0 in both.
//
// # Formats
//
// pmdumplog prints a record's time as HH:MM:SS.uuuuuu for v2 archives and
// HH:MM:SS.nnnnnnnnn for v3 (AppendTime with PrecisionFor(version)); with
// -x, and in the commencing/ending lines of -l/-L, it prints the date
// around it: "Wed Nov 24 23:10:06.248424 2004", "Sun Apr  3
// 06:50:55.401624349 2022" (AppendDate; the day of the month is padded
// with a space, as asctime does). The label lines use the archive's
// precision, not milliseconds; pmlogsummary -l prints its window with
// milliseconds (Millis). Fractions are truncated, never rounded. -xx adds
// the offset from the label start (AppendElapsed) and -xxx the epoch
// seconds. All of these were compared line by line with pmdumplog on QA
// archives of both versions, under -z and several -Z zones.
//
// # Time windows
//
// ParseWindow implements pmParseHighResTimeWindow and ParseTime
// __pmParseHighResTime, checked against libpcp itself (through ctypes) on
// 9,050 -S/-T/-O/-A combinations, against pmdumplog's choice of
// records and against pmlogsummary -l. A record is in the window when
// Start <= t <= End. The forms accepted:
//
//	30  1.5s  2min  1h30m  "1 hour 30 mins"  3days    interval: start + interval
//	+10m                                             the same, explicitly
//	-1h                                              end - interval
//	@ Wed Nov 24 23:10:06.5 2004                     ctime-like, absolute
//	@Nov 24 23:30  @24 23:30  @23:30  @11pm  @:30    leading parts from start,
//	                                                 rolled forward if earlier
//	2004-11-24 23:30:00  "Nov 24, 2004 11:30pm"      getdate forms, absolute;
//	11/24/2004  24-Nov-2004  20041124  "23:30 EST"   missing date parts from today
//	"2 hours ago"  "last week"  "3 days"             relative: from end if "last",
//	                                                 "ago" or '-', else from start
//	yesterday  today  tomorrow  thursday  now        relative to the present
//
// Interval units: nanosecond(s), microsecond(s), millisecond(s),
// second(s), minute(s), hour(s), day(s), nsec, usec, msec, sec, min, hr,
// s, m, h, d, any case, summed when several are given. PCP drops one
// trailing 's' before looking a unit up, so "10ms" is ten minutes.
//
// Details kept from PCP because they change results: fractions in "@"
// times go through x87 long double and are truncated, so "@...06.305961"
// is .305960999 and excludes a record stamped .305961; interval fractions
// are rounded to the nanosecond the same way; getdate results have no
// fraction; absolute times go through glibc's mktime, whose search
// decides what a wall time in a skipped or repeated hour means (02:30 in
// a 02:00-03:00 gap is 03:30) and which remembers the offset it last
// found, from -S to -A to -T to -O, as a fresh PCP process does; a start
// before the archive is moved to its start, an end after it to its end; a
// start after the end is not an error. The empty string means "option not
// given" (PCP would parse -S "" as today's midnight). Not supported: the
// hexadecimal, "inf" and "nan" numbers strtod would accept, rule times
// beyond 167 hours, and the nanosecond count of exactly 10^9 that PCP's
// arithmetic can leave unnormalised (we normalise).
//
// # Designs rejected
//
//   - A TZif file with no transitions and the rule as its footer. Go does
//     then evaluate the footer for every instant (it adds a transition at
//     the beginning of time and uses the footer after the last one; the
//     first version of this package did exactly that and matched glibc
//     almost everywhere), but not for the years up to 1970, and Go caches
//     the footer's answer for the current year up to that year's end
//     rule, which for a DST period crossing 31 December disagrees with
//     glibc (and with Go's own uncached answer) about early January. Go's
//     footer syntax also differs from glibc's (names, offset limits), so
//     the footer is always written in a normalised form.
//   - time.Date for absolute times: it resolves skipped and repeated hours
//     differently from glibc's mktime (a time in a gap goes back an hour).
//   - A grammar generator for getdate: the hand-written parser takes the
//     same shift choices as the yacc original, and the oracle test checks
//     it.
//   - Using the v3 zoneinfo field when present: more correct across DST
//     changes, but not what PCP prints; ZoneForLabel stays compatible and
//     a caller wanting the better zone can pass the zoneinfo string to
//     LoadZone.
package pcptime
