# deployer: the two commands a new user types are `make demo` and `make test`.
GO      ?= go
BIN     := $(CURDIR)/bin/deployer
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The commit and its time (not the build's), so two builds of a commit are the same binary.
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DATE    ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
PKG     := github.com/deployer-dev/deployer/internal/app
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).Date=$(DATE)

.PHONY: build demo demo-clean test bench lint docs soak

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/deployer

# Deploys examples/quickstart to dev on the local file:// backends: shows the
# plan, runs the Command components in dependency order, writes
# .deployer/stacks/quickstart/dev/state.json with a history snapshot and a
# deployment record, and releases the lock. A second run reports no changes.
demo: build
	cd examples/quickstart && $(BIN) deploy -e dev --yes
	cd examples/quickstart && $(BIN) state show -e dev
	cd examples/quickstart && $(BIN) history -e dev
	cd examples/quickstart && $(BIN) state locks

demo-clean:
	rm -rf examples/quickstart/.deployer examples/quickstart/out

# Installs and starts the test servers (dynalite, MinIO, redis-server, an OpenTelemetry Collector,
# PostgreSQL, local-kms) on loopback, installs actionlint, goreleaser, act and cosign, then runs gofmt,
# go vet and go test -race.
test:
	bash scripts/test.sh

# The long run of the convergence walk (docs/operations.md#how-operations-combine):
# SEED (a number or FROM-TO, default 1-20) seeds of STEPS (default 200) random
# day-2 operations each, on the file backends, and on S3 + DynamoDB when the test
# servers run (make soak starts them as make test does). A failure prints the seed
# and the shortest failing walk found. `make test` runs a few short seeds.
SEED  ?= 1-20
STEPS ?= 200
soak:
	DEPLOYER_WALK_SEED=$(SEED) DEPLOYER_WALK_STEPS=$(STEPS) bash scripts/test.sh go test -count=1 -timeout 24h -v -run '^TestConvergenceWalk' ./internal/e2e/

# Regenerates the command reference in docs/commands.md from the command tree
# (after changing a command, a flag or a help text; a test fails while it is stale).
docs:
	$(GO) generate ./cmd/gendocs

# Runs the Go benchmarks against the test servers. BENCH=regexp picks some:
# `make bench BENCH=PulumiSideBySide` is deployer's Pulumi engine against the
# Automation API directly, with a table of the ratios (docs/pulumi.md#speed);
# `make bench BENCH=ManyStacksRunners` is 50 stacks as a matrix run on 5
# simulated runners against one deploy --all (docs/many-stacks.md#one-runner-or-a-matrix;
# DEPLOYER_BENCH_SLEEP=0.2 runs it small).
bench:
	bash scripts/test.sh bench

# gofmt, go vet, staticcheck; actionlint on .github/workflows and the example
# matrix workflow (examples/many-stacks/.github/workflows), and goreleaser
# check on .goreleaser.yaml (both installed into ~/.cache/deployer-tools by
# scripts/test-servers/ghtools.sh, once).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	@CI=true bash -c 'source scripts/test-servers/ghtools.sh && set -x && "$$DEPLOYER_TEST_ACTIONLINT" && "$$DEPLOYER_TEST_ACTIONLINT" examples/many-stacks/.github/workflows/deploy-all.yml && "$$DEPLOYER_TEST_GORELEASER" check'
