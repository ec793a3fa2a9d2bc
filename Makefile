# schedlab — the two commands of the README do all set-up on a fresh machine with the Rust
# toolchain and Python 3:
#   make all    build, run every experiment manifest on the bundled traces, render reports
#   make test   the whole test suite, plus an independent reader (pyarrow) on our Parquet files,
#               plus the Slurm tests on a local single-machine cluster (skipped, with the
#               reason, where none can be started; required in CI)
CARGO  ?= cargo
PYTHON ?= python3
BIN    := target/release/schedlab
VENV   := .venv
# Every manifest, a user's own studies included; the tests run only the shipped ones, by name
# (tests/common/shipped.rs).
MANIFESTS := $(wildcard experiments/*.yaml)

.PHONY: all build test bench check-parquet lint clean venv

all: build
	$(BIN) run $(MANIFESTS)
	$(BIN) report $(MANIFESTS)

build:
	$(CARGO) build --release --locked

# Tests run on the release build: the binary they drive and the benchmarks share it. The venv
# comes first: a test runs the README's quick tour, which reads results with pandas.
test: build venv
	$(CARGO) test --release --locked
	$(MAKE) --no-print-directory check-parquet
	CARGO=$(CARGO) scripts/slurm-tests.sh

# Python for reading results (the README's tour) and for the independent Parquet checks.
venv: $(VENV)/.pyarrow-pandas

$(VENV)/.pyarrow-pandas:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet pyarrow pandas
	touch $@

# Opens our Parquet outputs with pyarrow and checks them against docs/outputs.md.
check-parquet: build venv
	$(VENV)/bin/python tests/check_parquet.py $(BIN)

bench: build
	$(CARGO) bench --locked --bench simulate
	$(CARGO) bench --locked --bench pipeline
	$(CARGO) bench --locked --bench throttle
	$(CARGO) bench --locked --bench generate
	$(CARGO) bench --locked --bench fairshare
	$(CARGO) bench --locked --bench eet
	$(CARGO) bench --locked --bench memory

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets --locked -- -D warnings

clean:
	$(CARGO) clean
	rm -rf $(VENV) results/.schedlab
