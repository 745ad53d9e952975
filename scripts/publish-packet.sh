#!/usr/bin/env bash
# Copy the evidence of an attempt folder into a published packet (reports/<date>-<label>/),
# index it with files.sha256 (tandem pack) and verify it (tandem pack --check).
# The packet's README.md (how to reproduce, what it claims) is written by hand beside it;
# run this again after editing it so files.sha256 covers it.
# usage: scripts/publish-packet.sh ATTEMPT_DIR PACKET_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 ATTEMPT_DIR PACKET_DIR" >&2; exit 2; }
attempt=$1 packet=$2
tandem=${TANDEM:-$(dirname "$0")/../build/tandem}
[ -f "$attempt/attempt-manifest.json" ] || { echo "$attempt: no attempt-manifest.json (not an attempt folder)" >&2; exit 1; }
mkdir -p "$packet/players" "$packet/smoke" "$packet/gate"
cp "$attempt/attempt-manifest.json" "$attempt/quiet-pregate.json" "$attempt/compile-check.json" "$packet/"
cp "$attempt/staging/staging.json" "$packet/staging.json"
for m in "$attempt"/players/*/binary-manifest-*.json; do cp "$m" "$packet/players/"; done
cp "$attempt"/smoke/smoke-*.json "$packet/smoke/"
cp "$attempt"/gate/gate.md "$attempt"/gate/gate-summary.json "$attempt"/gate/gate-chart.svg \
   "$attempt"/gate/gate-config.json "$packet/gate/"
size=$(stat -c %s "$attempt/runs.zip")
if [ "$size" -lt $((5 * 1024 * 1024)) ]; then
  cp "$attempt/runs.zip" "$packet/runs.zip"
else
  echo "runs.zip is $size bytes (over 5 MB): not copied" >&2
fi
tmp=$(mktemp -d)
"$tandem" pack "$packet" --out "$tmp/packet.zip" >/dev/null
rm -rf "$tmp"
"$tandem" pack --check "$packet"
