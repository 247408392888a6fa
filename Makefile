# wtd: build, demo and test.
GO      ?= go
BIN     := bin
WTD     := $(BIN)/wtd
MINIMONGOD := $(BIN)/minimongod
SWEEP_PARAMS ?=

.PHONY: all build demo test test-long fuzz vet fmt deps test-deps install clean

all: build

# deps installs libwiredtiger-dev (minimongod's engine) when it is missing:
# itself when running as root, else it says which command to run.
# test-deps adds what the tests use besides: python3-pymongo (a second real
# client of minimongod) and chromium (reports are tested in a real browser).
DEPS      := libwiredtiger-dev
TEST_DEPS := python3-pymongo chromium

deps:
	@$(MAKE) --no-print-directory install PKGS="$(DEPS)"

test-deps:
	@$(MAKE) --no-print-directory install PKGS="$(DEPS) $(TEST_DEPS)"

install:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing Debian packages:$$missing: run  sudo apt-get install -y$$missing  and then make again" >&2; exit 1; \
	  fi; \
	fi

build: deps
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o $(WTD) ./cmd/wtd
	CGO_ENABLED=1 $(GO) build -o $(MINIMONGOD) ./cmd/minimongod

# demo runs the cache sweep (docs/playbooks.md) against the built-in target.
demo: build
	$(WTD) run --mongod $(MINIMONGOD) playbooks/cache_sweep.lua $(SWEEP_PARAMS)

# RACE_PKGS run a second time under the race detector: the run engine, the
# workload generator, the scheduler, the results database, the daemon and
# its API, where goroutines share state.
RACE_PKGS = ./engine ./engine/workload ./engine/store ./schedule/... ./daemon/... ./web/...

# The tests mostly wait on servers and rates, not on the CPU: four
# packages at once keep two cores busy.
test: test-deps
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/wtd
	$(GO) test -p 4 -timeout 20m ./...
	$(GO) test -race -timeout 20m $(RACE_PKGS)
	@$(MAKE) --no-print-directory fuzz

# fuzz gives the FTDC reader random input for a short while (FUZZTIME per
# target); it must never panic. Minimizing a new input is bounded too, as
# the inputs are real files' first chunks (up to 110 KB).
FUZZTIME ?= 10s
fuzz:
	$(GO) test ./internal/ftdc -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x
	$(GO) test ./internal/ftdc -run '^$$' -fuzz '^FuzzChunk$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x

# test-long adds the full-size cache check (loads ~600 MB).
test-long: test
	$(GO) test -timeout 30m ./minimongod/itest -run TestSeed000 -seed000 -v

clean:
	rm -rf $(BIN)
