#!/usr/bin/env bash
# Copy the evidence of an attempt folder into a published packet (reports/<date>-<label>/),
# replace the machine's paths by placeholders, index it with files.sha256 (tandem pack) and
# verify it (tandem pack --check).
#
# Machine paths (issue 18): in the packet's JSON and Markdown files the attempt folder
# becomes <attempt> and the repository root <root> (tandem pack --redact). Before that,
# original-files.sha256 records the SHA-256 of every copied original under its path in the
# attempt folder (`cd ATTEMPT && sha256sum -c PACKET/original-files.sha256`); files.sha256
# then lists the published bytes. The packet's README.md gets (or has refreshed) a section
# saying so; the rest of the README (how to reproduce, what it claims) is written by hand:
# run this again after editing it so files.sha256 covers it.
#
# Raw runs (issue 41): the packet commits no raw per-process run. runs.zip (redacted and
# packed again) goes to the raw archive outside the repository, --raw-to DIR (default
# ${XDG_DATA_HOME:-~/.local/share}/tandem/raw/<packet name>), and the packet's files.sha256
# lists its hash and every file in it as runs.zip/<file> (`tandem pack --raw-archive`);
# `tandem pack --check PACKET --raw DIR` verifies them, and without them says they are not
# present. Publish a packet when an issue asks for one, not for every change.
# usage: scripts/publish-packet.sh [--raw-to DIR] ATTEMPT_DIR PACKET_DIR
set -euo pipefail
usage() { echo "usage: $0 [--raw-to DIR] ATTEMPT_DIR PACKET_DIR" >&2; exit 2; }
rawto=
case ${1:-} in
  --raw-to) [ $# -ge 2 ] || usage; rawto=$2; shift 2 ;;
  --raw-to=*) rawto=${1#--raw-to=}; shift ;;
esac
[ $# -eq 2 ] || usage
attempt=$1 packet=$2
[ -n "$rawto" ] || rawto=${XDG_DATA_HOME:-$HOME/.local/share}/tandem/raw/$(basename "$packet")
here=$(cd "$(dirname "$0")" && pwd -P)
tandem=${TANDEM:-$here/../build/tandem}
[ -f "$attempt/attempt-manifest.json" ] || { echo "$attempt: no attempt-manifest.json (not an attempt folder)" >&2; exit 1; }
[ -x "$tandem" ] || { echo "$tandem: no tandem command (build it, or set TANDEM)" >&2; exit 1; }
attempt_real=$(cd "$attempt" && pwd -P)
case $(cd "$(dirname "$packet")" 2>/dev/null && pwd -P)/ in
  "$attempt_real"/*) echo "$packet: the packet must not be inside the attempt folder" >&2; exit 1 ;;
esac
[ -f "$attempt/runs.zip" ] && [ ! -L "$attempt/runs.zip" ] || { echo "$attempt/runs.zip: missing or not a regular file" >&2; exit 1; }

# The originals, by their path in the attempt folder, and where each goes in the packet.
originals=(attempt-manifest.json quiet-pregate.json compile-check.json staging/staging.json)
for m in "$attempt"/players/*/binary-manifest-*.json; do originals+=("${m#"$attempt"/}"); done
for m in "$attempt"/smoke/smoke-*.json; do originals+=("${m#"$attempt"/}"); done
# the smoke suite's own players (an attempt's measured players hold the measured suites only)
for m in "$attempt"/smoke/*/binary-manifest-*.json; do
  [ -e "$m" ] && originals+=("${m#"$attempt"/}")
done
originals+=(gate/gate.md gate/gate-summary.json gate/gate-chart.svg gate/gate-config.json)
# the instruction arm's summaries (tandem history reads instructions per op from them) and,
# with --baseline, the baseline's record, staging.json and binary manifests (issue 17)
for m in "$attempt"/instructions/*-instructions.json "$attempt"/baseline/baseline.json \
         "$attempt"/baseline/staging/staging.json "$attempt"/baseline/*/binary-manifest-*.json; do
  [ -e "$m" ] && originals+=("${m#"$attempt"/}")
done
dest() {
  case $1 in
    staging/staging.json) echo staging.json ;;
    players/*) echo "players/${1##*/}" ;;
    smoke/*/binary-manifest-*) echo "smoke/${1##*/}" ;;
    baseline/staging/staging.json) echo baseline/staging.json ;;
    baseline/*/binary-manifest-*) echo "baseline/${1##*/}" ;;
    *) echo "$1" ;;
  esac
}
for f in "${originals[@]}"; do
  [ -f "$attempt/$f" ] && [ ! -L "$attempt/$f" ] || { echo "$attempt/$f: missing or not a regular file" >&2; exit 1; }
done

mkdir -p "$packet" "$rawto"
case $(cd "$rawto" && pwd -P)/ in
  "$(cd "$packet" && pwd -P)"/* | "$(cd "$here/.." && pwd -P)"/reports/*)
    rmdir "$rawto" 2>/dev/null; echo "$rawto: the raw archive must be outside the packet and the repository's reports/" >&2; exit 1 ;;
esac
# a runs.zip left in the packet by an earlier publish: the one published now goes to $rawto
[ ! -f "$packet/runs.zip" ] || { echo "$packet/runs.zip: removed (raw runs go to $rawto)" >&2; rm -f "$packet/runs.zip"; }
mkdir -p "$packet/players" "$packet/smoke" "$packet/gate"
for f in "${originals[@]}"; do mkdir -p "$packet/$(dirname "$(dest "$f")")"; done
for f in "${originals[@]}"; do cp "$attempt/$f" "$packet/$(dest "$f")"; done
# the hashes of the unredacted originals, sha256sum format, sorted by path (the attempt's
# runs.zip too: the raw archive published is its redacted copy)
(cd "$attempt" && "$tandem" hash "${originals[@]}" runs.zip) | LC_ALL=C sort -k2 >"$packet/original-files.sha256.tmp"
mv "$packet/original-files.sha256.tmp" "$packet/original-files.sha256"

# The machine paths: the attempt folder (as given, resolved, and as its manifest recorded
# it) and the repository root (this script's, and the staging's sourceRoot).
json_field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print(v if isinstance(v,str) else "")' "$1" "$2"; }
declare -A seen=()
redact=()
add_path() { # PATH PLACEHOLDER: absolute, trailing '/' removed, not '/', once
  local p=${1%/}
  [ -n "$p" ] && [ "${p:0:1}" = / ] && [ -z "${seen[$p]:-}" ] || return 0
  seen[$p]=1
  redact+=(--path "$p=$2")
}
add_path "$attempt_real" '<attempt>'
add_path "$(cd "$attempt" && pwd -L)" '<attempt>'
add_path "$(json_field "$attempt/attempt-manifest.json" folder)" '<attempt>'
add_path "$(cd "$here/.." && pwd -P)" '<root>'
add_path "$(json_field "$attempt/staging/staging.json" sourceRoot)" '<root>'

# The README's section on paths, added or refreshed (between its markers).
begin='<!-- publish-packet: machine paths -->' end='<!-- /publish-packet -->'
readme=$packet/README.md
[ -f "$readme" ] || printf '# Evidence packet\n\nPublished from an attempt folder with `scripts/publish-packet.sh`.\n' >"$readme"
awk -v b="$begin" -v e="$end" '$0 == b {skip = 1} !skip {print} $0 == e {skip = 0}' "$readme" >"$readme.tmp"
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$readme.tmp"   # no trailing blank lines
cat >>"$readme.tmp" <<EOF

$begin
## Machine paths

The absolute paths of the machine that ran the attempt are not published: in the packet's
JSON and Markdown files the attempt folder is written \`<attempt>\` and the repository root
\`<root>\` (\`tandem pack --redact\`, run by \`scripts/publish-packet.sh\`).
\`files.sha256\` lists the bytes as published (\`tandem pack --check\` verifies them).
\`original-files.sha256\` lists the SHA-256 of the unredacted originals under their paths
in the attempt folder (\`cd <attempt> && sha256sum -c original-files.sha256\` where it ran;
each line is also in the attempt's own \`files.sha256\`). \`runs.zip\` is redacted the same way
and packed again: its player reports and observations read \`<attempt>\` and \`<root>\`;
the hashes the gate recorded for them (\`gate/gate-summary.json\`, \`inputs\`) are those of
the originals, listed under \`runs/\` in \`original-files.sha256\`.

The raw runs are not committed: \`runs.zip\` is kept outside the repository (the raw archive,
\`scripts/publish-packet.sh --raw-to DIR\`); \`files.sha256\` lists its hash and every file in
it as \`runs.zip/<file>\`, and \`tandem pack --check <packet> --raw DIR\` verifies them.
$end
EOF
mv "$readme.tmp" "$readme"

"$tandem" pack --redact "$packet" "${redact[@]}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# runs.zip: extracted safely (its files.sha256 checked), the originals' hashes added to
# original-files.sha256 (under runs/, as in the attempt folder), redacted, packed again
# into the raw archive, never into the packet.
"$tandem" pack --extract "$attempt/runs.zip" --out "$tmp/runs" >/dev/null
inner=()
while IFS= read -r -d '' f; do inner+=("runs/${f#"$tmp/runs/"}"); done \
  < <(find "$tmp/runs" -type f ! -path "$tmp/runs/files.sha256" -print0)
{ cat "$packet/original-files.sha256"; (cd "$tmp" && "$tandem" hash "${inner[@]}"); } \
  | LC_ALL=C sort -k2 >"$packet/original-files.sha256.tmp"
mv "$packet/original-files.sha256.tmp" "$packet/original-files.sha256"
"$tandem" pack --redact "$tmp/runs" "${redact[@]}"
"$tandem" pack "$tmp/runs" --format zip --out "$rawto/runs.zip" >/dev/null
"$tandem" pack "$packet" --raw-archive "$rawto/runs.zip" --out "$tmp/packet.zip" >/dev/null
"$tandem" pack --check "$packet" --raw "$rawto"
echo "raw runs: $rawto/runs.zip (outside the repository; not committed)"
