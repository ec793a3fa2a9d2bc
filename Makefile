# schedlab — the two commands of the README do all set-up on a fresh machine with the Rust
# toolchain and Python 3:
#   make all    build, run every experiment manifest on the bundled traces, render reports
#   make test   the whole test suite, plus an independent reader (pyarrow) on our Parquet files,
#               plus the Slurm tests on a local single-machine cluster (skipped, with the
#               reason, where none can be started; required in CI)
CARGO  ?= cargo
PYTHON ?= python3
# Where cargo puts it: target/, or $CARGO_TARGET_DIR when set (a clone sharing another build's).
BIN    := $(or $(CARGO_TARGET_DIR),target)/release/schedlab
VENV   := .venv
# Every manifest, a user's own studies included; the tests run only the shipped ones, by name
# (tests/common/shipped.rs).
MANIFESTS := $(wildcard experiments/*.yaml)

.PHONY: all build test bench check-parquet lint clean venv docs-screenshots check-screenshots

# The package comes first: experiments/python-policies.yaml names Python policies, which the
# CLI hands to it (docs/policies.md, "In a manifest").
all: build venv
	$(BIN) run $(MANIFESTS)
	$(BIN) report $(MANIFESTS)

build:
	$(CARGO) build --release --locked

# Tests run on the release build: the binary they drive and the benchmarks share it. The venv
# comes first: a test runs the README's quick tour, which reads results with pandas.
test: build venv
	$(CARGO) test --release --locked
	$(MAKE) --no-print-directory check-parquet
	$(VENV)/bin/python -m pytest -q tests/python
	CARGO=$(CARGO) scripts/slurm-tests.sh

# Python with the schedlab package (python/, built by maturin in release, sharing target/ with
# the CLI's build), pandas and pyarrow for reading results, pytest and ruff for the tests, evalys
# (Batsim's analysis library) reading our Batsim exports.
# (Prerequisites through $(wildcard): a copy of the project without the package's sources, as
# the README's tour test makes, finds the venv it links up to date.)
PACKAGE_SOURCES := $(wildcard pyproject.toml python/Cargo.toml python/src/*.rs python/schedlab/*.py \
	Cargo.toml Cargo.lock src/*.rs src/*/*.rs src/*/*/*.rs src/*/*/*/*.rs src/*/*/*/*/*.rs)

venv: $(VENV)/.schedlab-package

$(VENV)/.schedlab-package: $(VENV)/.python-deps $(PACKAGE_SOURCES)
	$(VENV)/bin/maturin develop --release --locked --quiet -m python/Cargo.toml
	touch $@

$(VENV)/.python-deps: $(wildcard pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet "maturin>=1.8,<2" numpy pyarrow pandas pytest ruff gymnasium evalys pillow
	touch $@

# Opens our Parquet outputs with pyarrow and checks them against docs/outputs.md.
check-parquet: build venv
	$(VENV)/bin/python tests/check_parquet.py $(BIN)

# The report screenshots of docs/reports.md, regenerated (headless Chromium and pngquant, Debian
# packages `chromium` and `pngquant`; scripts/docs-screenshots.sh).
docs-screenshots: build
	scripts/docs-screenshots.sh

# Two shipped reports screenshotted into a temporary folder and each PNG checked (size, width and
# height, not blank): CI runs it, installing chromium as root when missing (scripts/ci-screenshots.sh).
check-screenshots: build venv
	PYTHON=$(VENV)/bin/python scripts/ci-screenshots.sh

bench: build
	$(CARGO) bench --locked --bench simulate
	$(CARGO) bench --locked --bench pipeline
	$(CARGO) bench --locked --bench throttle
	$(CARGO) bench --locked --bench generate
	$(CARGO) bench --locked --bench fairshare
	$(CARGO) bench --locked --bench eet
	$(CARGO) bench --locked --bench memory
	$(CARGO) bench --locked --bench scale

lint: $(VENV)/.python-deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(VENV)/bin/ruff format --check python policies tests/python examples scripts/peers/python_easy.py scripts/check-screenshot.py
	$(VENV)/bin/ruff check python policies tests/python examples scripts/peers/python_easy.py scripts/check-screenshot.py

clean:
	$(CARGO) clean
	rm -rf $(VENV) results/.schedlab
