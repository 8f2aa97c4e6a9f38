#!/usr/bin/env bash
# A picture of a gpux timeline (gpux -f perfetto's file) as
# tools/timeline_view.html draws it, taken by headless Chromium (Debian's
# chromium package): what docs/img/timeline.png is.
#   tools/timeline_shot.sh TRACE.json OUT.png [WIDTH,HEIGHT]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 TRACE.json OUT.png [WIDTH,HEIGHT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "timeline_shot: no chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/timeline_view.html" "$tmp/view.html"
{ printf 'window.TRACE = '; cat "$1"; printf ';\n'; } >"$tmp/trace.js"
out=$(realpath -m "$2")
# --no-sandbox: Chromium's sandbox refuses to run as root
"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--window-size="${3:-1400,700}" --screenshot="$out" "file://$tmp/view.html" 2>"$tmp/log" ||
	{ cat "$tmp/log" >&2; exit 1; }
[ -s "$out" ] || { cat "$tmp/log" >&2; exit 1; }
