#!/bin/sh
# pcp-qa.sh: run PCP's own QA tests for one of PCP's tools (pmlogextract or
# pmlogrewrite) against PCP's program and against ours (pcpextract or
# pcprewrite, invoked under PCP's name), and print a table of the results.
#
#   scripts/pcp-qa.sh [--tool TOOL] [-d] [-k DIR] [-t TIMEOUT] [TEST...]
#
#   --tool TOOL pmlogextract (the default; ours is ./cmd/pcpextract),
#               pmlogrewrite (./cmd/pcprewrite), pmlogsummary (./cmd/pcpsummary),
#               pmlogreduce (./cmd/pcpreduce), pmdumplog or pmlogcheck
#               (./cmd/pcpcat)
#   TEST...     QA test numbers (default: every test that uses TOOL: the
#               numbered scripts in the QA directory that name it, and the
#               tests the "group" file puts in TOOL's group)
#   -d          after the table, print the diff (expected vs our output) of
#               every test that passes with PCP's TOOL and not ours
#   -k DIR      keep each run's output, the diffs and the logged TOOL
#               command lines in DIR (created; by default nothing is kept)
#   -t TIMEOUT  per-test time limit, timeout(1) syntax (default 5m, as check)
#
# Environment: PCP_QA_DIR (default /var/lib/pcp/testsuite).
#
# How a test is judged: as PCP's "check" script does. It runs the test
# script in the QA directory with stdout and stderr in one file, under
# timeout -s ABRT; the test is "notrun" if it left NNN.notrun behind (it
# called _notrun: not applicable here), and otherwise passes only when it
# exited 0, dumped no core, and its output is byte for byte NNN.out (check
# applies no filter of its own: every test filters its output itself).
# What check does around the tests is left out on purpose: it runs "make
# setup", starts pmcd and the sample PMDAs, turns pmcd on in the init
# configuration, and runs the permission fixer 994 --fix; all of those
# change the machine. Tests that need a running pmcd therefore fail (or are
# notrun) with both programs alike. The one piece of check's setup that
# every test needs, the "localconfig" file (written by mk.localconfig, with
# src/localconfig.h), is created if missing and removed at the end.
#
# How ours is put in place: a directory holding TOOL is put first on PATH.
# It is a two-line script that appends its arguments to a log and then
# execs a symlink named TOOL to the freshly built binary (so our binary
# sees argv[0] = .../TOOL and takes PCP's command line). The log proves,
# per test, that PCP's scripts really ran ours and how often ("calls"
# column). PCP's pcp.env puts PCP's binary directories at the front of PATH
# unless they are already on it, so the script puts them on PATH itself,
# behind ours, for both runs. Tests that run $PCP_BINADM_DIR/TOOL (an
# absolute path) cannot be redirected without editing PCP's files or the
# installation: they are reported as "abs" and their "ours" result is
# really PCP's. PCP's own scripts that run pmlogrewrite (pmlogger_rewrite,
# pmlogger_daily) call it by name after sourcing pcp.env, so they find ours
# even when the test runs them by absolute path: such tests are "indir".
#
# Files: everything this script makes lives in one temporary directory,
# removed on exit. Files the tests create in the QA directory (NNN.full,
# NNN.notrun, scratch files) and their /var/tmp and /tmp scratch files
# (named by PID, as PCP QA does) are removed after each test; a test that
# changes an existing file of the QA directory is named in a warning. Some
# tests run pmlogger_check and the like, which write under PCP's own state
# directories ($PCP_LOG_DIR, $PCP_VAR_DIR, $PCP_SYSCONF_DIR, ...): paths a
# test adds there are removed too, and changed files are named in a warning.
# Needs only what scripts/install-deps.sh installs, plus Go (to build).
set -u

prog=pcp-qa.sh
warn() { echo "$prog: $*" >&2; }
usage() {
	warn "usage: $prog [--tool pmlogextract|pmlogrewrite|pmlogsummary|pmlogreduce|pmdumplog|pmlogcheck] [-d] [-k DIR] [-t TIMEOUT] [TEST...]"
	exit 2
}

# --tool comes first (getopts has no long options)
tool=pmlogextract
case ${1:-} in
--tool=*)
	tool=${1#--tool=}
	shift
	;;
--tool)
	[ $# -ge 2 ] || usage
	tool=$2
	shift 2
	;;
esac
case $tool in
pmlogextract) ours=pcpextract ;;
pmlogrewrite) ours=pcprewrite ;;
pmlogsummary) ours=pcpsummary ;;
pmlogreduce) ours=pcpreduce ;;
pmdumplog | pmlogdump | pmlogcheck) ours=pcpcat ;;
*)
	warn "$tool: not a tool this script knows (pmlogextract, pmlogrewrite, pmlogsummary, pmlogreduce, pmdumplog, pmlogdump, pmlogcheck)"
	usage
	;;
esac

showdiff=0
keep=""
limit=5m
while getopts dk:t: opt; do
	case $opt in
	d) showdiff=1 ;;
	k)
		case $OPTARG in
		/*) keep=$OPTARG ;;
		*) keep=$(pwd)/$OPTARG ;;
		esac
		;;
	t) limit=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
for t in "$@"; do
	case $t in
	'' | *[!0-9]*) warn "$t: not a QA test number"; usage ;;
	esac
done

QA=${PCP_QA_DIR:-/var/lib/pcp/testsuite}
if [ ! -f "$QA/check" ] || [ ! -f "$QA/common.rc" ]; then
	warn "$QA is not PCP's QA directory (install pcp-testsuite: scripts/install-deps.sh)"
	exit 1
fi
if [ ! -r /etc/pcp.conf ]; then
	warn "/etc/pcp.conf is missing: PCP is not installed"
	exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
PCP_BIN_DIR=$(. /etc/pcp.conf && echo "$PCP_BIN_DIR")
PCP_BINADM_DIR=$(. /etc/pcp.conf && echo "$PCP_BINADM_DIR")
PCP_SHARE_DIR=$(. /etc/pcp.conf && echo "$PCP_SHARE_DIR")
# where PCP keeps state that tests (pmlogger_check, pmlogger_daily, the rc
# scripts, ...) may write to: what a test adds there is removed after it. A
# directory that does not exist yet (often $PCP_RUN_DIR) is listed too: if a
# test creates it, it is new, and removed.
statedirs=$(. /etc/pcp.conf && for d in "$PCP_LOG_DIR" "$PCP_ARCHIVE_DIR" "$PCP_SYSCONF_DIR" \
	"$PCP_VAR_DIR" "$PCP_TMP_DIR" "$PCP_RUN_DIR"; do echo "$d"; done | sort -u)

work=""
made_localconfig=0
made_localconfig_h=0
cleanup() {
	if [ "$made_localconfig" = 1 ]; then
		rm -f "$QA/localconfig"
	fi
	if [ "$made_localconfig_h" = 1 ]; then
		rm -f "$QA/src/localconfig.h"
	fi
	if [ -n "$work" ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
# (and when our output goes to a pipe that closes, e.g. into head)
trap 'exit 141' PIPE

work=$(mktemp -d "${TMPDIR:-/tmp}/pcp-qa.XXXXXX") || exit 1
mkdir "$work/bin" "$work/link" "$work/path" "$work/res"
if ! (cd "$root" && go build -o "$work/bin/$ours" "./cmd/$ours"); then
	warn "building $ours failed"
	exit 1
fi
ln -s "$work/bin/$ours" "$work/link/$tool"
calls=$work/calls
cat >"$work/path/$tool" <<EOF
#!/bin/sh
echo "\$*" >>"$calls"
exec "$work/link/$tool" "\$@"
EOF
chmod 0755 "$work/path/$tool"

# The same PATH for both runs, with PCP's directories on it already so that
# pcp.env leaves the order alone; ours differs only by the first entry.
basepath="/usr/sbin:$PCP_BIN_DIR:$PCP_BINADM_DIR:$PCP_SHARE_DIR/bin:/usr/local/bin:/usr/bin:/sbin:/bin"
ourpath="$work/path:$basepath"

cd "$QA" || exit 1

if [ ! -f localconfig ]; then
	[ -f src/localconfig.h ] || made_localconfig_h=1
	made_localconfig=1
	if ! PATH=$basepath ./mk.localconfig >/dev/null 2>&1 || [ ! -f localconfig ]; then
		warn "mk.localconfig failed: cannot set up the QA directory"
		exit 1
	fi
fi

# Does a test script, as PCP's environment sets PATH, find ours?
found=$(PATH=$ourpath sh -c '. ./common.product >/dev/null 2>&1; command -v "$1"' sh "$tool" </dev/null)
if [ "$found" != "$work/path/$tool" ]; then
	warn "after PCP's environment setup, $tool is '$found', not ours: giving up"
	exit 1
fi

if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=$( (
		grep -l "$tool" $(ls | grep -E '^[0-9]+$')
		awk -v tool="$tool" '/^[0-9]+[ \t]/ { for (i = 2; i <= NF; i++) if ($i == tool) print $1 }' group
	) | sort -n -u)
fi

# how a test script refers to TOOL, from its non-comment lines
usage_kind() {
	code=$(sed -e 's/^[ \t]*#.*//' "$1" | grep "$tool")
	if echo "$code" | grep -q "BINADM_DIR/$tool"; then
		echo abs
	elif echo "$code" | grep -Eq "(^|[^-.\$/_A-Za-z0-9])$tool([^.A-Za-z0-9_]|\$)"; then
		echo path
	elif [ -z "$code" ]; then
		echo none
	else
		echo other
	fi
}

# entries of a directory, one per line
listdir() { ls -A "$1" 2>/dev/null | sort; }

# every path under PCP's state directories, but for the QA directory
liststate() {
	# shellcheck disable=SC2086 # one word per directory
	find $statedirs -path "$QA" -prune -o -print 2>/dev/null | sort -u
}

# runone TEST MODE: run a test like check does; sets $result
runone() {
	seq=$1
	mode=$2
	out=$work/res/$seq.$mode
	rm -f "$seq.notrun" "$seq.full" core "$calls"
	find . | sort >"$work/before.qa"
	listdir /var/tmp >"$work/before.vartmp"
	listdir /tmp >"$work/before.tmp"
	liststate >"$work/before.state"
	touch "$work/marker"
	if [ "$mode" = ours ]; then
		p=$ourpath
	else
		p=$basepath
	fi
	PATH=$p timeout -s ABRT "$limit" sh "./$seq" </dev/null >"$out" 2>&1
	sts=$?
	if [ -f "$seq.notrun" ]; then
		result="notrun: $(cat "$seq.notrun")"
	elif [ ! -f "$seq.out" ]; then
		result="fail (no $seq.out)"
	else
		result=pass
		[ -f core ] && result="fail (core)"
		[ $sts -ne 0 ] && result="fail (exit $sts)"
		if ! diff "$seq.out" "$out" >"$out.diff" 2>&1; then
			if [ "$result" = pass ]; then
				result="fail (output)"
			else
				result="$result, output"
			fi
		fi
	fi
	if [ -f "$calls" ]; then
		ncalls=$(wc -l <"$calls")
		mv "$calls" "$out.calls"
	else
		ncalls=0
	fi
	# remove what the test left behind: new paths in the QA directory,
	# PID-named scratch files, new paths under PCP's state directories
	find . | sort | comm -13 "$work/before.qa" - | while IFS= read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		rm -rf "$f"
	done
	listdir /var/tmp | comm -13 "$work/before.vartmp" - | grep -E '^[0-9]' | while IFS= read -r f; do
		rm -rf "/var/tmp/$f"
	done
	listdir /tmp | comm -13 "$work/before.tmp" - | grep -E "^$seq-[0-9]+" | while IFS= read -r f; do
		rm -rf "/tmp/$f"
	done
	# (new paths, in sorted order, come parents before children: removing a
	# new directory takes what is new inside it too)
	liststate | comm -13 "$work/before.state" - | while IFS= read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		rm -rf "$f"
	done
	changed=$(find . -newer "$work/marker" -type f 2>/dev/null | head -5)
	if [ -n "$changed" ]; then
		warn "test $seq ($mode) changed files of $QA:" $changed
	fi
	# shellcheck disable=SC2086 # one word per directory
	changed=$(find $statedirs -path "$QA" -prune -o -type f -newer "$work/marker" -print 2>/dev/null | head -5)
	if [ -n "$changed" ]; then
		warn "test $seq ($mode) changed PCP files:" $changed
	fi
}

n_tests=0
n_abs=0
n_appl=0
n_pcp=0
n_both=0
n_lost=0
n_gained=0
lost=""
printf '%-6s %-5s %-40s %-40s %s\n' test uses "PCP's $tool" "ours" calls
for seq in $tests; do
	if [ ! -f "$seq" ]; then
		warn "no QA test $seq"
		continue
	fi
	n_tests=$((n_tests + 1))
	kind=$(usage_kind "$seq")
	[ "$kind" = abs ] && n_abs=$((n_abs + 1))
	runone "$seq" pcp
	r_pcp=$result
	runone "$seq" ours
	r_ours=$result
	c_ours=$ncalls
	# a test that names TOOL only in comments may still run it through
	# another test script or tool (pmlogger_merge, pmlogger_rewrite, ...)
	[ "$kind" = none ] && [ "$c_ours" -gt 0 ] && kind=indir
	case $r_pcp in
	notrun*) ;;
	*)
		n_appl=$((n_appl + 1))
		if [ "$r_pcp" = pass ]; then
			n_pcp=$((n_pcp + 1))
			if [ "$r_ours" = pass ]; then
				n_both=$((n_both + 1))
			else
				n_lost=$((n_lost + 1))
				lost="$lost $seq"
			fi
		elif [ "$r_ours" = pass ]; then
			n_gained=$((n_gained + 1))
		fi
		;;
	esac
	printf '%-6s %-5s %-40.40s %-40.40s %s\n' "$seq" "$kind" "$r_pcp" "$r_ours" "$c_ours"
done

cat <<EOF

uses: path = runs $tool by name (PATH), abs = by absolute path
(\$PCP_BINADM_DIR: cannot run ours), indir = runs it through another
script (another QA test, pmlogger_merge, pmlogger_rewrite, pmlogger_daily,
...), none = only mentions it in comments or is in the $tool group and did
not run it, other = names it some other way.
calls: how many times the "ours" run executed our $tool.

EOF
printf '%-40s%s\n' "tests that use $tool:" "$n_tests (by absolute path: $n_abs)" \
	"applicable (not notrun with PCP's):" "$n_appl" \
	"pass with PCP's $tool:" "$n_pcp" \
	"  of which also pass with ours:" "$n_both" \
	"  pass with PCP's, fail with ours:" "$n_lost${lost:+ (}${lost# }${lost:+)}" \
	"fail with PCP's, pass with ours:" "$n_gained"

if [ "$showdiff" = 1 ]; then
	for seq in $lost; do
		echo
		echo "=== $seq: diff $seq.out ours"
		cat "$work/res/$seq.ours.diff"
		if [ -s "$work/res/$seq.ours.calls" ]; then
			echo "--- $tool command lines"
			cat "$work/res/$seq.ours.calls"
		fi
	done
fi

if [ -n "$keep" ]; then
	mkdir -p "$keep" && cp -R "$work/res/." "$keep/"
fi
exit 0
