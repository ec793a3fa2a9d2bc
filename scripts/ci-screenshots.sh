#!/usr/bin/env bash
# The report screenshots, checked in CI (issue 35: screenshots "taken by a test or a script that
# runs in CI"). Runs two shipped experiments (markov-arrivals and lpc-queues, about 15 s each)
# into a temporary results folder, renders their reports, screenshots parts of them in headless
# Chromium with scripts/screenshot-report.sh — as `make docs-screenshots` does for docs/ — and
# checks that each PNG is a page a reader can see (scripts/check-screenshot.py: size, width and
# height, not blank). It writes nothing into the checkout; docs/*.png are regenerated only by
# `make docs-screenshots`.
#
# Chromium (Debian package `chromium`) is installed with apt-get when it is missing and this
# runs as root (CI); without root and without chromium it skips, saying why. PYTHON is a Python
# with Pillow (default: the project's .venv, which `make venv` makes).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "installing chromium (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "skipped the report screenshots: chromium is not installed, and installing it needs root (apt-get install chromium)"
    exit 0
  fi
fi
python=${PYTHON:-.venv/bin/python}
bin=${SCHEDLAB_BIN:-${CARGO_TARGET_DIR:-target}/release/schedlab}
[ -x "$bin" ] || cargo build --release --locked
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
manifests=(experiments/markov-arrivals.yaml experiments/lpc-queues.yaml)
"$bin" run --quiet --results "$work/results" "${manifests[@]}"
"$bin" report --date 2026-01-01 --results "$work/results" --out "$work/reports" "${manifests[@]}"
# name, report, height, sections: the same parts docs/reports.md shows.
shots=(
  "markov-arrivals markov-arrivals 3600 findings,burstiness"
  "lpc-queues lpc-queues 1700 queues"
)
for shot in "${shots[@]}"; do
  read -r name report height sections <<<"$shot"
  scripts/screenshot-report.sh "$work/reports/$report.html" "$work/$name.png" "$height" "$sections"
  "$python" scripts/check-screenshot.py "$work/$name.png" 1100 "$height"
done
