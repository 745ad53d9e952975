#!/bin/bash
# calibrate.sh - the calibration of the baseline verdict and the peer verdict (issue 42, item 5).
#
#   scripts/calibrate.sh [--runs N] [--pairs M] [--quick] [--only PARTS] [--work DIR]
#                        [--power-sizes S,S..] [--build DIR] [--no-build] [PACKET]
#
# Parts (--only aa,aa-time,regression,improvement,stability,power; default all but aa-time):
#   aa           `tandem attempt --baseline HEAD --instructions` on this clean tree: the same
#                code against itself. A run passes when the baseline verdict is "no regression"
#                and the exit says so too (0 or 3: the peers' PASS or FAIL, no regression).
#   aa-time      the same without --instructions, default mode only: the time arm's own
#                false-alarm rate (an A/A's instructions are identical: that arm never fires),
#                in about half the time; the calibration of a change to the time arm's rule.
#   regression   a clone of HEAD with tests/calibration/regression.patch committed (a fixed cost
#                in the loop's drain: every NextFrame/yield entry, about 3% of the throughput
#                rows' instructions), measured with --baseline HEAD~1 (the unpatched code). A run
#                passes when the verdict is "regression" (exit 4 or 5), throughput / nextframe N=1024 is named
#                on every backend, and every row named grew in instructions (a row named by time
#                alone at unchanged instructions is a false alarm).
#   improvement  the same clone with the patch reverted on top: HEAD (clean) against HEAD~1
#                (patched). A run passes when throughput / nextframe N=1024 is "improved" on
#                every backend and the verdict is "no regression" (exit 0 or 3).
#   stability    scripts/stability.sh pairs of default attempts (no baseline). A pair passes
#                when no gated row flips outside the rows marked borderline and both verdicts
#                are the same.
#   power        the time arm alone (no --instructions): the seeded regression scaled to S
#                times its stores (--power-sizes, default 1,2,4,8), --baseline HEAD~1. A run
#                passes (detects) when throughput / nextframe N=1024 is "regression" decided
#                by time on every backend. Default mode only (--quick measures one layout,
#                where the time arm never decides). The README gives, per size, the rate and
#                the smallest size found in >= 19 of 20 runs: the time arm's power.
# Each part runs N times (--runs, default 20; stability: --pairs, default 10) in the default
# configuration, and again in --quick unless --quick is given alone (then quick only). Results
# accumulate in PACKET/results.tsv, one line a run: stop it at any time and run it again, it
# runs only what is missing. PACKET/README.md is rewritten from results.tsv after every run.
# Each aa, aa-time and power run (default mode) is judged a second time with the same code's
# spread measured against the process's peers (the gate's "baselineSameCodeSpread": "peers",
# its default since b66bfaa; a commit before it judged by each side's own time):
# results.tsv's last field, peers, 1 or 0 ("-" where not judged).
# Attempt folders go under --work (default BUILD/calibration), not into the packet.
# PACKET: default reports/<UTC date>-calibration.
# Exit: 0 when every recorded run passed (power runs aside: a miss is part of their rate), 1
# otherwise, 2 usage or a tree that is not clean.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build build_tool=1 runs=20 pairs=10 quick_only=0 only=aa,regression,improvement,stability,power work=
sizes=1,2,4,8
usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs|--pairs|--only|--work|--build|--power-sizes)
      [ $# -ge 2 ] || { echo "calibrate.sh: $1 needs a value" >&2; exit 2; }
      case $1 in --runs) runs=$2 ;; --pairs) pairs=$2 ;; --only) only=$2 ;; --work) work=$2 ;; --build) build=$2 ;;
                 --power-sizes) sizes=$2 ;; esac
      shift 2 ;;
    --quick) quick_only=1; shift ;;
    --no-build) build_tool=0; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "calibrate.sh: unknown option '$1'" >&2; usage 2 ;;
    *) break ;;
  esac
done
[ $# -le 1 ] || usage 2
case $runs$pairs in *[!0-9]*) echo "calibrate.sh: --runs and --pairs take a count" >&2; exit 2 ;; esac
IFS=, read -r -a power_sizes <<<"$sizes"
for s in "${power_sizes[@]}"; do
  case $s in ''|*[!0-9]*|0) echo "calibrate.sh: --power-sizes: '$s' is not a count of 1 or more" >&2; exit 2 ;; esac
  [ "$s" -le 64 ] || { echo "calibrate.sh: --power-sizes: $s is over 64" >&2; exit 2; }
done
cd "$root" || exit 2
packet=${1:-reports/$(date -u +%Y-%m-%d)-calibration}
work=${work:-$build/calibration}
case $work in /*) ;; *) work=$root/$work ;; esac # the attempts run from the clones' folders
T=$root/$build/tandem
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "calibrate.sh: the tree has uncommitted changes: an A/A needs a clean tree (commit or stash first)" >&2
  exit 2
fi
if [ $build_tool = 1 ]; then make --no-print-directory tool BUILD="$build" >/dev/null || exit 2; fi
[ -x "$T" ] || { echo "calibrate.sh: no $T (make tool)" >&2; exit 2; }
mkdir -p "$packet" "$work" || exit 2
results=$packet/results.tsv
[ -f "$results" ] || printf 'part\tmode\trun\tpass\tseconds\tverdict\tdetail\tbusy\tcommit\tstarted\tfolder\tpeers\n' >"$results"
if [ "$(head -n1 "$results")" = "$(printf 'part\tmode\trun\tpass\tseconds\tverdict\tdetail\tbusy\tcommit\tstarted\tfolder')" ]; then
  # a results.tsv from before the peers field: each line gains it, "-" (not judged that way)
  awk 'BEGIN { FS = OFS = "\t" } { print $0, (NR == 1 ? "peers" : "-") }' "$results" >"$results.tmp" &&
    mv "$results.tmp" "$results" || exit 2
fi
head=$(git rev-parse --short HEAD)
modes=(default quick)
[ $quick_only = 1 ] && modes=(quick)

done_runs() { awk -F'\t' -v p="$1" -v m="$2" -v c="$head" '$1==p && $2==m && $9==c' "$results" | wc -l; }
record() { # part mode run pass seconds verdict detail busy started folder peers
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$head" "$9" "${10}" "${11:--}" >>"$results"
  python3 "$root/scripts/calibrate_report.py" "$results" "$packet/README.md" "$head" || true
}

# A clone of HEAD with the patch committed (regression: HEAD patched, HEAD~1 clean) or
# committed then reverted (improvement: HEAD clean, HEAD~1 patched); power-S: the patch's
# two stores made 2 x S stores.
clone_for() {
  local dir=$work/clone-$1
  [ -d "$dir/.git" ] && [ "$(cat "$dir/.calibrate-base" 2>/dev/null)" = "$head" ] && { echo "$dir"; return; }
  rm -rf "$dir"
  git clone -q --no-hardlinks "$root" "$dir" && git -C "$dir" checkout -q "$head" &&
    git -C "$dir" apply "$root/tests/calibration/regression.patch" || return 1
  case $1 in power-*) scale_patch "$dir/runtime/src/loop.c" "${1#power-}" || return 1 ;; esac
  git -C "$dir" -c user.name=calibrate -c user.email=calibrate@tandem commit -qam "calibration: seeded regression" || return 1
  if [ "$1" = improvement ]; then
    git -C "$dir" -c user.name=calibrate -c user.email=calibrate@tandem revert --no-edit HEAD >/dev/null || return 1
  fi
  echo "$head" >"$dir/.calibrate-base"
  echo "$dir"
}

# The seeded cost's two volatile stores made 2 x S (S >= 1) in the patched loop.c.
scale_patch() { # file S
  python3 - "$1" "$2" <<'PY'
import sys
path, s = sys.argv[1], int(sys.argv[2])
text = open(path).read()
old = "td_calibration_ = 1; td_calibration_ = 2;"
if text.count(old) != 1:
    sys.exit(f"calibrate.sh: {path}: the seeded cost's stores ('{old}') are not there once")
open(path, "w").write(text.replace(old, " ".join(f"td_calibration_ = {i};" for i in range(1, 2 * s + 1))))
PY
}

# One attempt of a part; prints "pass<TAB>verdict<TAB>detail<TAB>busy<TAB>peers" from its gate
# summary. peers: how the rule "peers" judges the run, 1 or 0, whatever the commit's default:
# the attempt's own verdict where its gate already used "baselineSameCodeSpread": "peers" (the
# same code's layout spread measured against the process's subjects built once;
# tools/gate/SAMPLES.md), else its processes judged again by the gate that way into
# FOLDER/gate-peers; for the parts where the time arm decides (aa, aa-time and power, default
# mode); "-" elsewhere.
judge() { # part mode folder exit
  python3 - "$1" "$2" "$3" "$4" "$T" <<'PY'
import glob, json, os, subprocess, sys
part, mode, folder, rc, tandem = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
busy = 0
for f in glob.glob(os.path.join(folder, "runs", "observations", "*.json")):
    try:
        busy += json.load(open(f)).get("noise", {}).get("status") == "busy"
    except Exception:
        pass
target = ("throughput", "nextframe N=1024")


def judged(b, rc):
    """(pass, verdict, detail) of one gate summary's baseline section and the gate's exit."""
    verdict = b.get("verdict", "?")
    reg = [(r["suite"], r["row"], r["backend"], r.get("decidedBy", "?"), r.get("instructions"))
           for r in b.get("regressions", [])]
    imp = [(r["suite"], r["row"], r["backend"]) for r in b.get("improved", [])]
    backends = sorted({r["backend"] for r in b.get("rows", [])})
    if part.startswith("power-"):
        named = {be for s, r, be, d, i in reg if (s, r) == target and "time" in d}
        return named == set(backends) and bool(backends), verdict, \
            f"target regressed by time on {','.join(sorted(named)) or 'none'} of {','.join(backends)}; " \
            f"{len(reg)} regression(s)"
    if part in ("aa", "aa-time"):
        return verdict == "no regression" and rc in (0, 3), verdict, \
            "; ".join(f"{s}/{r} [{be}] by {d}" for s, r, be, d, _ in reg) or "-"
    if part == "regression":
        named = {be for s, r, be, d, i in reg if (s, r) == target}
        false = [f"{s}/{r} [{be}]" for s, r, be, d, i in reg if i != "regression"]
        return verdict == "regression" and named == set(backends) and not false and rc in (4, 5), verdict, \
            f"target named on {','.join(sorted(named)) or 'none'} of {','.join(backends)}; " \
            f"{len(reg)} regression(s); named without more instructions: {', '.join(false) or 'none'}"
    named = {be for s, r, be in imp if (s, r) == target}
    return verdict == "no regression" and named == set(backends) and rc in (0, 3), verdict, \
        f"target improved on {','.join(sorted(named)) or 'none'} of {','.join(backends)}; {len(reg)} regression(s)"


def rejudged_against_peers():
    """The attempt's processes judged with "baselineSameCodeSpread": "peers": (summary baseline
    section, the exit), or (None, why). Where the attempt's own gate already used "peers" (the
    default since b66bfaa), its own verdict is that judgement; otherwise the gate runs again."""
    try:
        conf = json.load(open(os.path.join(folder, "gate", "gate-config.json")))
    except (OSError, ValueError) as x:
        return None, f"no gate configuration ({x})"
    if conf.get("baselineSameCodeSpread") == "peers":
        return b, rc
    out = os.path.join(folder, "gate-peers")
    os.makedirs(out, exist_ok=True)
    conf["baselineSameCodeSpread"] = "peers"
    json.dump(conf, open(os.path.join(out, "gate-config.json"), "w"), indent=1)
    cmd = [tandem, "gate", os.path.join(folder, "runs"), "--config", os.path.join(out, "gate-config.json"),
           "--out", out]
    if os.path.isdir(os.path.join(folder, "instructions")):
        cmd += ["--instructions", os.path.join(folder, "instructions")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.load(open(os.path.join(out, "gate-summary.json")))["baseline"], p.returncode
    except (OSError, ValueError, KeyError) as x:
        return None, f"the gate said exit {p.returncode} ({x})"


try:
    b = json.load(open(os.path.join(folder, "gate", "gate-summary.json")))["baseline"]
except Exception as x:
    print(f"0\tno gate summary (exit {rc})\t{x}\t{busy}\t-")
    sys.exit(0)
ok, verdict, detail = judged(b, rc)
peers = "-"
if mode == "default" and (part in ("aa", "aa-time") or part.startswith("power-")):
    pb, prc = rejudged_against_peers()
    if pb is b:  # the attempt's own gate used "peers": its judgement above is that rule's
        peers = str(int(ok))
        detail += "; against the peers: the attempt's own gate"
    elif pb is None:
        detail += f"; against the peers: not judged: {prc}"
    else:
        pok, pverdict, pdetail = judged(pb, prc)
        peers = str(int(pok))
        detail += f"; against the peers: {pverdict}, {pdetail}"
print(f"{int(ok)}\t{verdict}\t{detail}; exit {rc}\t{busy}\t{peers}")
PY
}

run_part() { # part mode k
  local part=$1 mode=$2 k=$3 dir=$root opts=(--instructions) base=HEAD
  local folder=$work/$part-$mode-$head-$k
  [ "$mode" = quick ] && opts+=(--quick)
  case $part in power-*|aa-time) opts=() ;; esac # the time arm alone
  case $part in regression|improvement|power-*) dir=$(clone_for "$part") || { echo "calibrate.sh: cannot prepare the $part clone" >&2; exit 1; }; base=HEAD~1 ;; esac
  rm -rf "$folder"
  local started; started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local t0=$SECONDS
  echo "calibrate: $part $mode run $k: tandem attempt --baseline $base ${opts[*]} (in $dir)"
  (cd "$dir" && "$T" attempt --project "$dir" --baseline "$base" "${opts[@]}" --out "$folder" >"$folder.log" 2>&1)
  local rc=$?
  IFS=$'\t' read -r pass verdict detail busy peers < <(judge "$part" "$mode" "$folder" "$rc")
  record "$part" "$mode" "$k" "$pass" $((SECONDS - t0)) "$verdict" "$detail" "$busy" "$started" "$folder" "$peers"
  echo "calibrate: $part $mode run $k: $verdict ($( [ "$pass" = 1 ] && echo pass || echo FAIL)), $((SECONDS - t0)) s, $busy busy process(es)"
}

run_pair() { # mode k
  local mode=$1 k=$2 opts=(--no-build --build "$build")
  [ "$mode" = quick ] && opts+=(--quick)
  local a=$work/stability-$mode-$head-$k-a b=$work/stability-$mode-$head-$k-b out=$work/stability-$mode-$head-$k.md
  rm -rf "$a" "$b"
  local started; started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local t0=$SECONDS
  echo "calibrate: stability $mode pair $k: scripts/stability.sh ${opts[*]}"
  scripts/stability.sh "${opts[@]}" "$a" "$b" "$out" >"$out.log" 2>&1
  local line va vb
  line=$(grep -m1 "gated rows compared" "$out" 2>/dev/null)
  va=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$a/gate/gate-summary.json" 2>/dev/null || echo "?")
  vb=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$b/gate/gate-summary.json" 2>/dev/null || echo "?")
  # "<n> gated rows compared: <f> flipped (<b> of them borderline), ..."
  local flipped borderline pass=0
  flipped=$(sed -n 's/.*compared: \([0-9]*\) flipped.*/\1/p' <<<"$line")
  borderline=$(sed -n 's/.*flipped (\([0-9]*\) of them borderline).*/\1/p' <<<"$line")
  [ -n "$flipped" ] && [ "$flipped" = "$borderline" ] && [ "$va" = "$vb" ] && [ "$va" != "?" ] && pass=1
  record stability "$mode" "$k" "$pass" $((SECONDS - t0)) "$va/$vb" "${line:-no comparison}" "-" "$started" "$out"
  echo "calibrate: stability $mode pair $k: $va/$vb, ${line:-no comparison}"
}

IFS=, read -r -a parts <<<"$only"
for part in "${parts[@]}"; do
  case $part in aa|aa-time|regression|improvement|stability|power) ;; *) echo "calibrate.sh: unknown part '$part'" >&2; exit 2 ;; esac
done
for mode in "${modes[@]}"; do
  for part in "${parts[@]}"; do
    want=$runs
    [ "$part" = stability ] && want=$pairs
    names=("$part")
    case $part in aa-time|power) [ "$mode" = quick ] && continue ;; esac # one layout: the time arm never decides
    if [ "$part" = power ]; then
      names=()
      for s in "${power_sizes[@]}"; do names+=("power-$s"); done
    fi
    for name in "${names[@]}"; do
      for ((k = $(done_runs "$name" "$mode") + 1; k <= want; k++)); do
        if [ "$part" = stability ]; then run_pair "$mode" "$k"; else run_part "$name" "$mode" "$k"; fi
      done
    done
  done
done
python3 "$root/scripts/calibrate_report.py" "$results" "$packet/README.md" "$head" || exit 1
# (a power run that misses is part of a rate, not a failure)
awk -F'\t' -v c="$head" 'NR > 1 && $9 == c && $4 != 1 && $1 !~ /^power-/ { bad = 1 } END { exit bad }' "$results"
