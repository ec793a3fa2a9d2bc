#!/usr/bin/env bash
# Renders an HTML report in headless Chromium (Debian package `chromium`) to a PNG, as a reader
# would see it. Usage: scripts/screenshot-report.sh reports/easy-vs-fcfs.html docs/report-screenshot.png [HEIGHT]
set -euo pipefail
html=$(realpath "$1")
png=$2
height=${3:-4200}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1100,"$height" \
  --screenshot="$png" "file://$html" 2>/dev/null
echo "wrote $png"
