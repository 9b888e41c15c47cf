#!/usr/bin/env bash
# Remakes docs/images/report-page.png: the demo's report page (the figures, then the items)
# with the regressed items shown and one opened (its expected page ranked against the
# baseline's), as headless Chromium (Debian's, see setup-mermaid.sh) draws it. Offline.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
.venv/bin/golden-gate demo --out "$out" >/dev/null 2>&1
mkdir -p docs/images
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-background-networking --virtual-time-budget=3000 --window-size=1400,2000 \
    --screenshot=docs/images/report-page.png \
    "file://$out/report.html#status=regressed&open=trouble-sealed-503" 2>/dev/null
echo "wrote docs/images/report-page.png"
