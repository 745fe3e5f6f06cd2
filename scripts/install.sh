#!/usr/bin/env bash
# Installs the tools the way packagers and users expect (make install and
# make install-compat call it):
#
#   scripts/install.sh [--bin DIR] [--prefix PREFIX] [--destdir DESTDIR] [--compat]
#
#   PREFIX/bin/pcp*                                the tools (from --bin, default ./bin)
#   PREFIX/share/man/man1/pcp*.1                   a man page per tool
#   PREFIX/share/bash-completion/completions/pcp*  bash completion
#   PREFIX/share/zsh/site-functions/_pcp*          zsh completion
#   PREFIX/share/fish/vendor_completions.d/pcp*.fish
#   with --compat, PREFIX/lib/pcptools/pcp/        symlinks under PCP's names
#                                                  (pmdumplog, pmlogextract, ...)
#
# The man pages and completions are printed by the tools themselves
# (PCPTOOLS_GENERATE=man|bash|zsh|fish), from the option definitions that
# make their --help, so the three cannot disagree. DESTDIR is prepended to
# every path written, as packagers expect; the symlinks are relative, so
# they work wherever the tree is put.
set -euo pipefail

bin=./bin prefix=/usr/local destdir="" compat=0
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--destdir) destdir=$2; shift 2 ;;
	--compat) compat=1; shift ;;
	*) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

root=$destdir$prefix
tools=(pcpcat pcpextract pcprewrite pcpreduce pcpsummary pcpimport pcpmmv pcpexport)
for t in "${tools[@]}"; do
	if [ ! -x "$bin/$t" ]; then
		echo "install.sh: $bin/$t is not built (make build)" >&2
		exit 1
	fi
done
install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
	"$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
for t in "${tools[@]}"; do
	install -m 0755 "$bin/$t" "$root/bin/$t"
	PCPTOOLS_GENERATE=man "$bin/$t" >"$root/share/man/man1/$t.1"
	PCPTOOLS_GENERATE=bash "$bin/$t" >"$root/share/bash-completion/completions/$t"
	PCPTOOLS_GENERATE=zsh "$bin/$t" >"$root/share/zsh/site-functions/_$t"
	PCPTOOLS_GENERATE=fish "$bin/$t" >"$root/share/fish/vendor_completions.d/$t.fish"
done
echo "install.sh: installed ${#tools[@]} tools, their man pages and completion under $root"

if [ "$compat" = 1 ]; then
	dir=$root/lib/pcptools/pcp
	install -d "$dir"
	# PCP's name, then the tool that takes its command line.
	while read -r name tool; do
		ln -sfn "../../../bin/$tool" "$dir/$name"
	done <<-'END'
		pmdumplog pcpcat
		pmlogdump pcpcat
		pmlogcheck pcpcat
		pmlogextract pcpextract
		pmlogrewrite pcprewrite
		pmlogredact pcprewrite
		pmlogreduce pcpreduce
		pmlogsummary pcpsummary
	END
	echo "install.sh: PCP's archive tools' names are in $dir; to run ours under them: export PATH=$prefix/lib/pcptools/pcp:\$PATH"
fi
