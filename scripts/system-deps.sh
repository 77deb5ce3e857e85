#!/bin/sh
# System packages the test suite needs beyond the Python venv.
# - chromium: tests/e2e/test_html_report.py opens the HTML report in real headless Chromium
#   (Debian's package), tests/e2e/view/test_view_chromium.py drives `ctxprobe view` in it. Without it those tests FAIL, on purpose, with a message naming
#   this script: a skipped browser check would let a broken report pass unseen.
# Idempotent: installs only what is missing. Needs root (or sudo) and apt (Debian/Ubuntu).
set -eu

need=""
command -v chromium >/dev/null 2>&1 || need="$need chromium"

if [ -z "$need" ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
else
    SUDO=""
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: please install:$need (no apt-get here)" >&2
    exit 1
fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y $need
