# Build, test and benchmark entry points. `make check` is the one command CI
# runs (through .ci/run); everything else is for people.
#
#   make build    compile every package, put the tools in ./bin
#   make deps     install PCP, its QA archives and the compressors if missing
#   make check    deps + gofmt + go vet + go test (what CI runs)
#   make demo     a short tour of the tools (scripts/demo.sh)
#   make fuzz     run every Fuzz* target for FUZZTIME each
#   make bench    Go benchmarks, then the comparison with PCP (scripts/bench.sh)
#   make install  the tools, man pages and completion under PREFIX (DESTDIR honoured)
#   make install-compat  also a directory of symlinks under PCP's tools' names
#   make clean    remove ./bin;  make distclean  also the generated bench data

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO ?= go
# go test's own limit: a hung test fails with a goroutine dump instead of
# running into CI's wall clock limit.
TEST_TIMEOUT ?= 60m
GOTESTFLAGS ?= -parallel 4
FUZZTIME ?= 30s
# The tools are built without the CLI library's markdown and man page code
# (they make their man pages themselves, internal/toolio/manpage.go): its
# packages' initialisation alone made every run 0.3 MiB larger. The
# profiles of PCPTOOLS_CPUPROFILE and PCPTOOLS_MEMPROFILE need the pprof
# tag too (make build TAGS='urfave_cli_no_docs pprof'): runtime/pprof cost
# every run about 0.4 MiB (internal/toolio/profile.go).
TAGS ?= urfave_cli_no_docs
BENCHFLAGS ?=

# One binary per directory under cmd/, so a tool is built as soon as its
# directory exists.
CMDS := $(patsubst cmd/%/,%,$(wildcard cmd/*/))

.PHONY: all build deps check fmt-check vet test demo fuzz bench clean distclean install install-compat

all: build

build:
	$(GO) build -tags '$(TAGS)' ./...
ifneq ($(CMDS),)
	@mkdir -p bin
	$(GO) build -tags '$(TAGS)' -o bin/ $(addprefix ./cmd/,$(CMDS))
endif

# The quick --check needs no root and runs in well under a second, so only a
# machine that really lacks something pays for apt.
deps:
	@if scripts/install-deps.sh --check >/dev/null 2>&1; then \
		echo "deps: PCP and the test tools are installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
		scripts/install-deps.sh; \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo scripts/install-deps.sh; \
	else \
		echo "deps: missing dependencies and neither root nor sudo: run scripts/install-deps.sh as root" >&2; \
		exit 1; \
	fi

check: deps fmt-check vet test

fmt-check:
	@files=$$(find . -path ./.git -prune -o -path ./bench/data -prune \
		-o -path '*/testdata' -prune -o -name '*.go' -print | sort); \
	if [ -z "$$files" ]; then exit 0; fi; \
	bad=$$(gofmt -l $$files); \
	if [ -n "$$bad" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):" >&2; \
		echo "$$bad" | sed 's/^/  /' >&2; \
		exit 1; \
	fi; \
	echo "gofmt: ok"

vet:
	$(GO) vet ./...
	cd interop/duckdb && $(GO) vet ./...

# interop/duckdb is a module of its own (DuckDB's Go binding needs cgo,
# which stays out of the tools' build): it reads pcpexport's Parquet with a
# real engine. About a minute on a cold build cache.
test:
	$(GO) test -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...
	cd interop/duckdb && $(GO) test -timeout $(TEST_TIMEOUT) ./...

demo: build
	scripts/demo.sh

fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(BENCHFLAGS) ./...
	scripts/bench.sh
	scripts/bench-export.sh
	scripts/bench-pipe.sh --runs 5
	scripts/bench-mmv.sh 30

PREFIX ?= /usr/local
DESTDIR ?=

install: build
	scripts/install.sh --bin bin --prefix $(PREFIX) --destdir "$(DESTDIR)"

install-compat: build
	scripts/install.sh --bin bin --prefix $(PREFIX) --destdir "$(DESTDIR)" --compat

clean:
	rm -rf bin

distclean: clean
	rm -rf bench/data
