# result-sanitizer — build, demo, test.
#
#   make demo   run the sanitizer on the examples with the embedded default pack
#   make test   build everything and run every test
#
# One cargo profile (release) serves the CLI, the tests and the wasm guest,
# so wasmtime and Cranelift are compiled once.

CARGO     ?= cargo
WASM_TARGET := wasm32-unknown-unknown
CORE      := target/$(WASM_TARGET)/release/result_sanitizer_pipeline.wasm
BIN       := target/release/result-sanitizer
SHARED    ?= $(abspath ../shared)

.PHONY: all build wasm-target components demo test test-rust clean

all: build

wasm-target:
	@rustup target list --installed 2>/dev/null | grep -qx $(WASM_TARGET) || \
	  rustup target add $(WASM_TARGET) || \
	  sh $(SHARED)/toolchain/install-wasm-target.sh

# Every native cargo command here builds the whole workspace with all
# targets, so features unify the same way each time and wasmtime is compiled
# once (a narrower build would resolve other features and rebuild it).
NATIVE := $(CARGO) build --release --workspace --all-targets

# The pipeline as a core module, then components + precompiled artifacts
# (xtask), then the CLI that embeds them.
components: wasm-target
	$(CARGO) build --release --target $(WASM_TARGET) -p result-sanitizer-pipeline -p pack-template
	$(NATIVE)
	target/release/xtask $(CORE)

build: components
	$(NATIVE)

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

test-rust: build
	$(CARGO) test --release --workspace

test: test-rust

clean:
	$(CARGO) clean
