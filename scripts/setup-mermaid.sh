#!/usr/bin/env bash
# Sets up the real Mermaid renderer the chart tests use (tests/rendering/test_charts.py):
#
#   1. Chromium from Debian's packages (mermaid-cli renders in a headless browser; puppeteer's
#      own browser download is a fetch outside any package registry, so it is skipped);
#   2. @mermaid-js/mermaid-cli (mmdc) with puppeteer from npm, into .tools/ (git-ignored);
#   3. .tools/mermaid-puppeteer.json: puppeteer pointed at Debian's Chromium, run headless as
#      root on a closed network (no sandbox, no background networking).
#
# Idempotent: a second run takes well under a second. Prints nothing but what it does.
set -euo pipefail
cd "$(dirname "$0")/.."

MERMAID_CLI_VERSION=11.12.0  # 12.x needs Node.js 22; this machine's Node.js is 20
PUPPETEER_VERSION=23.11.1
tools=.tools
stamp=$tools/.mermaid-cli-$MERMAID_CLI_VERSION

if ! command -v chromium >/dev/null 2>&1; then
    echo "setup-mermaid: installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi

if [ ! -f "$stamp" ]; then
    echo "setup-mermaid: installing @mermaid-js/mermaid-cli $MERMAID_CLI_VERSION"
    PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix "$tools" --no-audit --no-fund \
        --loglevel=error --save-exact "@mermaid-js/mermaid-cli@$MERMAID_CLI_VERSION" \
        "puppeteer@$PUPPETEER_VERSION"
    touch "$stamp"
fi

cat > "$tools/mermaid-puppeteer.json" <<JSON
{
  "executablePath": "$(command -v chromium)",
  "args": ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
           "--disable-background-networking", "--disable-component-update"]
}
JSON
