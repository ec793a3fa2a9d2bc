#!/usr/bin/env bash
# Renders the reports shown in docs/reports.md and screenshots their main parts into docs/
# (headless Chromium, scripts/screenshot-report.sh), then shrinks the PNGs (pngquant: a palette
# of at most 256 colours, which charts on white need; each file a few hundred KB at most).
# `make docs-screenshots` runs it.
#
# It runs the shipped experiments it shows (cached after `make all`) and the example sweep
# docs/examples/load-tau-sweep.yaml, and renders every report with a fixed date into a temporary
# folder. RESULTS=DIR reads and writes results there instead of results/ (a checkout whose
# results live elsewhere); NO_RUN=1 renders the results found there without running anything.
# Needs the Debian packages `chromium` and `pngquant`.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in chromium pngquant; do
  if ! command -v "$tool" >/dev/null; then
    echo "error: $tool is not installed" >&2
    echo "hint: apt-get install chromium pngquant" >&2
    exit 2
  fi
done
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
[ -x "$bin" ] || cargo build --release --locked
results=${RESULTS:-results}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
manifests=(experiments/easy-vs-fcfs.yaml experiments/reservations.yaml experiments/markov-arrivals.yaml
  docs/examples/load-tau-sweep.yaml experiments/user-aware.yaml experiments/lpc-queues.yaml
  experiments/fairshare-penalties.yaml experiments/fairshare-orders.yaml)
[ -n "${NO_RUN:-}" ] || "$bin" run --quiet --results "$results" "${manifests[@]}"
"$bin" report --date 2026-01-01 --results "$results" --out "$out" "${manifests[@]}"
shot() { scripts/screenshot-report.sh "$out/$1.html" "docs/$2.png" "$3" "$4" "${5:-}"; }
shot easy-vs-fcfs report-easy-vs-fcfs 3900 findings,metrics-across-the-grid
shot easy-vs-fcfs report-easy-vs-fcfs-schedule 3100 over-time-and-per-job,schedule
shot reservations report-reservations 6400 reservations
shot reservations report-reservations-sweep 2600 metrics-across-the-grid
shot markov-arrivals report-markov-arrivals 3600 findings,burstiness
shot load-tau-sweep report-load-tau-sweep 4200 findings,metrics-across-the-grid
shot user-aware report-user-aware 3300 user-aware-metrics-expected-end-times
shot user-aware report-user-aware-heatmaps 1100 user-aware-metrics-expected-end-times \
  eet-heatmap-fifo,eet-heatmap-easy-fairshare
shot lpc-queues report-lpc-queues 1700 queues
shot fairshare-penalties report-fairshare-penalties 1480 multi-resource-penalties-pe-min-against-cpu
shot fairshare-orders report-fairshare-orders 2400 findings,fairshare
# Small files: 256-colour palettes (text and lines on white lose nothing a reader sees).
for png in docs/report-*.png; do
  pngquant --force --skip-if-larger --strip --quality=60-90 --output "$png" "$png" || true
done
ls -l docs/report-*.png
