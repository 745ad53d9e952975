#!/bin/bash
# stability.sh - stability, measured (issue 13): two default attempts back to back, then
# `tandem gate --compare` on their runs.
#
#   scripts/stability.sh [--build DIR] [--no-build] [--instructions] [--quick] RUN_A RUN_B [OUT]
#
# Each attempt is what `make run` runs (`tandem attempt`, the embedded defaults), into the
# new folder RUN_A, then RUN_B (`tandem attempt --out`; the folders must not exist or be
# empty). --instructions adds the instruction arm to both, --quick the suites' quick mode
# (a check of this script, not a measurement). The comparison judges each run by its own
# attempt's gate configuration (RUN_X/gate/gate-config.json, `--config`, `--config-b`): the
# two may differ only in the process count (the processes each attempt's sequential rule
# added); any other difference is refused (exit 2). It goes to OUT
# (default: RUN_B/../stability-<A>-<B>.md) and stdout: per gated row both verdicts, both
# medians and spreads, flipped or not, and "borderline" where a threshold lies within the
# row's noise band (a flip there is noise at this sample size).
#
# --build DIR: the CMake build folder (default: build, as make run); the tool is built
# first with `make tool` (as make run does) unless --no-build.
# Exit: the comparison's (0 no flip, 1 a flip or a run that is not comparable), 2 usage, an
# attempt that left no gate configuration (aborted before its gate), or two configurations
# that set different rules.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build build_tool=1
attempt_opts=()
usage() {
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || { echo "stability.sh: --build needs a folder" >&2; exit 2; }; build=$2; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    --no-build) build_tool=0; shift ;;
    --instructions|--quick) attempt_opts+=("$1"); shift ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    -*) echo "stability.sh: unknown option '$1'" >&2; usage 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "stability.sh: need RUN_A RUN_B [OUT]" >&2; usage 2; }
run_a=$1 run_b=$2
[ "$run_a" != "$run_b" ] || { echo "stability.sh: RUN_A and RUN_B are the same folder" >&2; exit 2; }
for d in "$run_a" "$run_b"; do
  if [ -e "$d" ] && { [ ! -d "$d" ] || [ -L "$d" ] || [ -n "$(ls -A "$d")" ]; }; then
    echo "stability.sh: $d: exists and is not an empty folder (an attempt never overwrites)" >&2
    exit 2
  fi
done
out=${3:-$(dirname "$run_b")/stability-$(basename "$run_a")-$(basename "$run_b").md}
case $build in /*) ;; *) build=$root/$build ;; esac
tandem=$build/tandem

if [ $build_tool = 1 ]; then
  make -C "$root" tool BUILD="$build" || { echo "stability.sh: make tool failed" >&2; exit 2; }
fi
[ -x "$tandem" ] || { echo "stability.sh: $tandem: not built (run make tool, or drop --no-build)" >&2; exit 2; }

# Back to back: B starts as soon as A's gate is written; each keeps its own exit code.
declare -A rc
for side in a b; do
  dir=$run_a
  [ $side = b ] && dir=$run_b
  echo "stability.sh: attempt $side -> $dir ($(date -u +%H:%M:%SZ))"
  "$tandem" attempt --out "$dir" "${attempt_opts[@]}"
  rc[$side]=$?
  echo "stability.sh: attempt $side exit ${rc[$side]} (0 PASS, 3 FAIL, 1 INVALID or aborted)"
done

cfg_a=$run_a/gate/gate-config.json cfg_b=$run_b/gate/gate-config.json
for c in "$cfg_a" "$cfg_b"; do
  [ -f "$c" ] || { echo "stability.sh: $c: missing (the attempt stopped before its gate)" >&2; exit 2; }
done
# each run by its own count of processes (the sequential rule adds to one attempt, not the
# other); the gate refuses two configurations that differ in anything else
"$tandem" gate --compare "$run_a/runs" "$run_b/runs" --config "$cfg_a" --config-b "$cfg_b" --out "$out"
status=$?
echo "stability.sh: comparison in $out (exit $status; attempts exited ${rc[a]} and ${rc[b]})"
exit $status
