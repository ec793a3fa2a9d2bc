#!/usr/bin/env bash
# Renders an HTML report in headless Chromium (Debian package `chromium`) to a PNG, as a reader
# would see it: 1100 px wide, the page cut at HEIGHT px.
#
#   scripts/screenshot-report.sh REPORT.html OUT.png [HEIGHT] [SECTION,…] [FIGURE,…]
#
# With SECTION ids (e.g. findings,metrics-across-the-grid — the ids of the report's <section>s),
# only the title and those sections are shown, so one part of a long report can be looked at.
# With FIGURE ids as well, those sections show only their heading and those figures.
set -euo pipefail
html=$(realpath "$1")
png=$2
height=${3:-4200}
sections=${4:-}
figures=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
page="$html"
if [ -n "$sections" ]; then
  keep=""
  IFS=',' read -ra ids <<<"$sections"
  for id in "${ids[@]}"; do keep="$keep:not(#$id)"; done
  style="<style>body > :not(h1):not(section) { display: none !important; } section$keep { display: none !important; }</style>"
  if [ -n "$figures" ]; then
    only=""
    IFS=',' read -ra fids <<<"$figures"
    for id in "${fids[@]}"; do only="$only:not(#$id)"; done
    style="$style<style>section > :not(h2):not(figure), section > figure$only { display: none !important; }</style>"
  fi
  page="$work/page.html"
  # The style goes right before </head>; the report is self-contained, so the copy renders alike.
  awk -v style="$style" '{ if (!done && sub(/<\/head>/, style "</head>")) done = 1; print }' "$html" >"$page"
fi
mkdir -p "$work/profile"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --window-size=1100,"$height" \
  --screenshot="$png" "file://$page" 2>/dev/null
echo "wrote $png"
