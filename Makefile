# wtd: build, demo and test.
GO      ?= go
BIN     := bin
WTD     := $(BIN)/wtd
MINIMONGOD := $(BIN)/minimongod
SWEEP_PARAMS ?=

.PHONY: all build demo test test-long vet fmt deps clean

all: build

# deps installs libwiredtiger-dev (minimongod's engine) when it is missing:
# itself when running as root, else it says which command to run.
deps:
	@if ! [ -e /usr/include/wiredtiger.h ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing libwiredtiger-dev"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwiredtiger-dev; \
	  else \
	    echo "minimongod needs WiredTiger: run  sudo apt-get install -y libwiredtiger-dev  and then make again" >&2; exit 1; \
	  fi; \
	fi

build: deps
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o $(WTD) ./cmd/wtd
	CGO_ENABLED=1 $(GO) build -o $(MINIMONGOD) ./cmd/minimongod

# demo runs the cache sweep (docs/playbooks.md) against the built-in target.
demo: build
	$(WTD) run --mongod $(MINIMONGOD) playbooks/cache_sweep.lua $(SWEEP_PARAMS)

test: deps
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/wtd
	$(GO) test -timeout 20m ./...

# test-long adds the full-size cache check (loads ~600 MB).
test-long: test
	$(GO) test -timeout 30m ./minimongod/itest -run TestSeed000 -seed000 -v

clean:
	rm -rf $(BIN)
