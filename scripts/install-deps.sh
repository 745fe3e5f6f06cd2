#!/bin/sh
# install-deps.sh: install the system packages the tests and benchmarks need
# on Debian bookworm, then check that they work.
#
#   scripts/install-deps.sh          install what is missing (as root), verify
#   scripts/install-deps.sh --check  verify only; never installs, needs no root
#   scripts/install-deps.sh --reinstall PKG...
#                                    reinstall these packages even if dpkg says
#                                    they are fine (repairs; tests this script)
#
# What the tests need: PCP 6.0.3's tools (pmdumplog, pmlogcheck, pmlogextract,
# pmlogrewrite, pmlogsummary) as the reference implementation, its QA suite
# (pcp-testsuite ships the fixture archives under /var/lib/pcp/testsuite), its
# Python bindings (scripts/gen-bench-archive.py writes archives with
# pcp.pmi), the compressors PCP reads archive volumes with, and GNU time for
# the benchmark harness.
#
# When every package is already installed the script does no apt work at all
# (no "apt-get update"): it only runs the checks, which take well under a
# second. A package left half-configured by an earlier failed run counts as
# missing and is reinstalled.
#
# Why the systemctl shim: the pcp package's maintainer scripts call systemctl
# (daemon-reload, start pmcd) whenever systemctl exists. In a container, or
# any machine where systemd is not PID 1, those calls fail, dpkg marks pcp as
# half-configured and everything depending on it stays unconfigured. While
# apt and dpkg run we therefore put a throw-away directory holding a no-op
# "systemctl" at the front of the search path. Two places need it: our own
# PATH (for a direct dpkg call) and apt's DPkg::Path option, because apt runs
# dpkg with that fixed search path rather than the caller's PATH. Nothing on
# the system is replaced or diverted, the directory is deleted on exit, and no
# daemon gets started. When systemd really is running the shim is not used.
set -eu

prog=install-deps.sh
PKGS="pcp pcp-testsuite python3-pcp zstd xz-utils bzip2 gzip ncompress time"
# The importers' and exporters' oracles: sheet2pcp (pcpimport's mapfiles),
# pcp2json (the export benchmark; pcp2csv ships in pcp itself) and promtool
# (prometheus: the OpenMetrics export is checked by turning it into blocks).
PKGS="$PKGS pcp-import-sheet2pcp pcp-export-pcp2json prometheus"

say() { echo "$prog: $*"; }
warn() { echo "$prog: $*" >&2; }

usage() {
	warn "usage: $prog [--check | --reinstall PKG...]"
	exit 2
}
check_only=0
force=""
case "${1:-}" in
"") ;;
--check) check_only=1 ;;
--reinstall)
	shift
	[ $# -gt 0 ] || usage
	force="$*"
	;;
*) usage ;;
esac

installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

missing_pkgs() {
	m=""
	for p in $PKGS; do
		installed "$p" || m="$m $p"
	done
	echo "$m"
}

# verify prints every problem it finds and returns non-zero if there was one.
verify() {
	bad=0
	for p in $PKGS; do
		if ! installed "$p"; then
			warn "package $p is not (fully) installed"
			bad=1
		fi
	done
	if [ ! -r /etc/pcp.conf ]; then
		warn "/etc/pcp.conf is missing: PCP is not installed"
		return 1
	fi
	# pcp.conf is a list of shell assignments: read the few we need in
	# subshells so that the rest does not leak into this script.
	bindir=$(. /etc/pcp.conf && echo "$PCP_BIN_DIR")
	admdir=$(. /etc/pcp.conf && echo "$PCP_BINADM_DIR")
	version=$(. /etc/pcp.conf && echo "$PCP_VERSION")

	# pmdumplog knows --version; the others only know -? (usage, exit 1),
	# which still proves the binary and its libraries load.
	if ! "$bindir/pmdumplog" --version >/dev/null 2>&1; then
		warn "$bindir/pmdumplog does not run"
		bad=1
	fi
	for t in "$bindir/pmlogcheck" "$bindir/pmlogsummary" \
		"$admdir/pmlogextract" "$admdir/pmlogrewrite"; do
		if [ ! -x "$t" ]; then
			warn "$t is missing"
			bad=1
		elif ! "$t" '-?' 2>&1 | grep -qi usage; then
			warn "$t does not run"
			bad=1
		fi
	done
	if [ ! -d /var/lib/pcp/testsuite/archives ]; then
		warn "/var/lib/pcp/testsuite/archives is missing (pcp-testsuite)"
		bad=1
	fi
	# Debian's python3-pcp lives in the system interpreter: use it by full
	# path, a python3 earlier on PATH (pyenv, venv) does not see it.
	if ! /usr/bin/python3 -c 'from pcp import pmi' 2>/dev/null; then
		warn "/usr/bin/python3 cannot import pcp.pmi (python3-pcp)"
		bad=1
	fi
	tools="zstd xz bzip2 gzip"
	case " $PKGS " in
	*" ncompress "*) tools="$tools compress" ;;
	esac
	for t in $tools; do
		if ! command -v "$t" >/dev/null 2>&1; then
			warn "$t is not on PATH"
			bad=1
		fi
	done
	for t in sheet2pcp pcp2csv pcp2json promtool; do
		if ! command -v "$t" >/dev/null 2>&1; then
			warn "$t is not on PATH"
			bad=1
		fi
	done
	if [ ! -x /usr/bin/time ]; then
		warn "/usr/bin/time (GNU time) is missing"
		bad=1
	fi
	if [ "$bad" = 0 ]; then
		say "OK: PCP $version and the other test dependencies are installed and run"
	fi
	return "$bad"
}

if [ "$check_only" = 1 ]; then
	verify
	exit $?
fi

missing="$(missing_pkgs) $force"
if [ -z "${missing# }" ]; then
	verify
	exit $?
fi

if [ "$(id -u)" != 0 ]; then
	warn "missing packages:$missing; run me as root (sudo $0)"
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# keep the existing configuration files, never ask
apt_opts="-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"

shimdir=""
cleanup() {
	if [ -n "$shimdir" ]; then
		rm -rf "$shimdir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -d /run/systemd/system ]; then
	say "systemd is running: no systemctl shim needed"
else
	shimdir=$(mktemp -d "${TMPDIR:-/tmp}/install-deps-shim.XXXXXX")
	cat >"$shimdir/systemctl" <<'EOF'
#!/bin/sh
# Stand-in for systemctl while packages are configured on a machine without
# systemd as PID 1: succeed without doing anything, except answer "no" to the
# is-* questions so that no script believes a unit is running.
echo "(install-deps systemctl stand-in, ignored) systemctl $*" >&2
for arg in "$@"; do
	case "$arg" in
	is-active | is-enabled | is-failed | is-system-running) exit 1 ;;
	esac
done
exit 0
EOF
	chmod 0755 "$shimdir/systemctl"
	PATH="$shimdir:$PATH"
	export PATH
	apt_opts="$apt_opts -o DPkg::Path=$shimdir:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	say "systemd is not PID 1: using a no-op systemctl from $shimdir"
fi

# A previous run that failed part way may have left packages unpacked but not
# configured; finishing that first lets apt resolve the rest.
dpkg --configure -a || true

say "missing:$missing; refreshing the package lists"
apt-get update -q

# Install only what the archive actually offers; name what it does not.
want=""
for p in $missing; do
	cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		case "$p" in
		ncompress)
			warn "package ncompress is not available: skipping it (gzip -d also reads .Z files)"
			PKGS=$(echo "$PKGS" | sed 's/ncompress//')
			;;
		*)
			warn "package $p has no installation candidate"
			exit 1
			;;
		esac
	else
		want="$want $p"
	fi
done

if [ -n "$want" ]; then
	say "installing:$want"
	# --reinstall repairs a half-installed package and is a plain install
	# for an absent one.
	# shellcheck disable=SC2086 # word splitting of the option and package lists is wanted
	apt-get install $apt_opts --reinstall $want
fi
dpkg --configure -a

verify
