#!/bin/bash
# test_gate.sh TANDEM MODE WORK: gate outputs and attempt tests (see CMakeLists.txt).
# The attempts stage HEAD (--from-git HEAD): the working tree may be mid-edit.
set -uo pipefail
T=$1
MODE=$2
W=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# True when ATTEMPT's gate is INVALID for the busy host alone (gate_busy.c), else False
busy_invalid() { python3 "$(dirname "$0")/../lib/busy_invalid.py" "$1"; }

case $MODE in
outputs)
  rm -rf "$W/synthetic" && mkdir -p "$W"
  "$T" gate --self-check --out "$W/synthetic" >/dev/null 2>&1 || fail "self-check"
  # judged with the self-check's configuration (not the project's gate: tandem vs fcontext)
  C=(--config "$W/synthetic/gate-config.json")
  for c in case00 case03 case07; do
    "$T" gate "$W/synthetic/$c" "${C[@]}" --out "$W/synthetic/$c-a" >/dev/null; rc_a=$?
    "$T" gate "$W/synthetic/$c" "${C[@]}" --out "$W/synthetic/$c-b" >/dev/null; rc_b=$?
    [ $rc_a = $rc_b ] || fail "$c: exit codes differ ($rc_a, $rc_b)"
    for f in gate.md gate-summary.json gate-chart.svg; do
      cmp -s "$W/synthetic/$c-a/$f" "$W/synthetic/$c-b/$f" || fail "$c: $f differs between two runs"
    done
    case $c in case00) want=0 ;; case03) want=3 ;; case07) want=1 ;; esac
    [ $rc_a = $want ] || fail "$c: exit $rc_a, expected $want"
  done
  # the copy of a runs folder elsewhere gives the same bytes (no absolute paths, no times)
  cp -r "$W/synthetic/case03" "$W/synthetic/moved"
  "$T" gate "$W/synthetic/moved" "${C[@]}" --out "$W/synthetic/moved-out" >/dev/null
  cmp -s "$W/synthetic/case03-a/gate-summary.json" "$W/synthetic/moved-out/gate-summary.json" || fail "moved runs: summary differs"
  python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$W/synthetic/case03-a/gate-chart.svg" || fail "chart is not well-formed XML"
  grep -q '"verdict":	"FAIL"' "$W/synthetic/case03-a/gate-summary.json" || fail "case03 summary verdict"
  ;;
quick)
  rm -rf "$W/quick"
  mkdir -p "$W"
  start=$(date +%s)
  "$T" attempt --quick --from-git HEAD --out "$W/quick" >"$W/quick.log" 2>&1; rc=$?
  echo "quick attempt: exit $rc in $(( $(date +%s) - start )) s"; tail -3 "$W/quick.log"
  A="$W/quick"
  # on a host that stays busy the gate says so (INVALID: every FAIL rests on busy processes,
  # issue 42): the one INVALID a correct attempt may end with
  busy=$(busy_invalid "$A")
  case $rc in 0|3) ;; 1) [ "$busy" = True ] || { fail "quick attempt exit 1, not a busy host"; cat "$W/quick.log"; } ;;
    *) fail "quick attempt exit $rc (0 PASS or 3 FAIL expected)"; cat "$W/quick.log" ;; esac
  for f in quiet-pregate.json staging/staging.json compile-check.json attempt-manifest.json attempt.log \
           files.sha256 runs.zip gate/gate.md gate/gate-summary.json gate/gate-chart.svg; do
    [ -e "$A/$f" ] || fail "missing $f"
  done
  n=$(json "$A/attempt-manifest.json" "len(d['processes'])")
  seq=$(json "$A/attempt-manifest.json" "d['sequential']['processesAdded']")   # the sequential rule's (SEQUENTIAL.md)
  [ "$n" = $((16 + seq)) ] || fail "manifest lists $n processes, expected 16 (8 gated, 8 default-retention report-only) + $seq"
  ok=$(json "$A/attempt-manifest.json" "sum(p['status'].startswith('ok') for p in d['processes'])")
  [ "$ok" = "$n" ] || fail "$ok of $n processes ok"
  v=$(json "$A/gate/gate-summary.json" "d['verdict']")
  [ "$v" != INVALID ] || [ "$busy" = True ] || { fail "gate INVALID"; json "$A/gate/gate-summary.json" "d['invalid']"; }
  # the measured players hold the measured suites only, as the baseline's module does; the
  # smoke suite runs on players of its own
  want="['buildercycle', 'builderlifecycle', 'cancellation', 'primary', 'throughput', 'whenany']"
  for b in aot jit; do
    got=$(json "$A/players/$b/player-$b.json" "sorted(d['suites'])")
    [ "$got" = "$want" ] || fail "players/$b built with suites $got, expected the measured $want"
    got=$(json "$A/smoke/$b/player-$b.json" "d['suites']")
    [ "$got" = "['smoke']" ] || fail "smoke/$b built with suites $got, expected ['smoke']"
  done
  (cd "$A" && sha256sum -c --quiet files.sha256) || fail "files.sha256 does not verify"
  "$T" pack --check "$A/runs.zip" >/dev/null || fail "runs.zip does not verify"
  # never overwritten
  "$T" attempt --quick --out "$A" >/dev/null 2>&1 && fail "an existing attempt folder was reused"
  ;;
crash|hang)
  P="$W/quick/players"
  [ -d "$P/aot" ] || { echo "no players from the quick attempt"; exit 1; }
  rm -rf "$W/$MODE"
  if [ $MODE = crash ]; then F=crash@2; X=""; else F=hang@3; X="--timeout 10"; fi
  start=$(date +%s)
  # no sequential rule: its added processes would meet the hang test's 10 s timeout on a loaded host
  TANDEM_TEST_FAULTS=1 "$T" attempt --quick --from-git HEAD --out "$W/$MODE" --players-from "$P" --test-fault $F $X \
    --sequential-budget 0 >"$W/$MODE.log" 2>&1; rc=$?
  echo "$MODE attempt: exit $rc in $(( $(date +%s) - start )) s"
  case $rc in 0|3) ;; 1) [ "$(busy_invalid "$W/$MODE")" = True ] || { fail "$MODE attempt exit 1"; cat "$W/$MODE.log"; } ;;
    *) fail "$MODE attempt exit $rc"; cat "$W/$MODE.log"
                       [ -f "$W/$MODE/gate/gate-summary.json" ] && json "$W/$MODE/gate/gate-summary.json" "d['invalid']" ;; esac
  A="$W/$MODE"
  idx=${F#*@}
  name=$(json "$A/attempt-manifest.json" "d['processes'][$idx-1]['name']")
  st=$(json "$A/attempt-manifest.json" "d['processes'][$idx-1]['status']")
  tries=$(json "$A/attempt-manifest.json" "d['processes'][$idx-1]['tries']")
  [ "$st" = ok-after-retry ] && [ "$tries" = 2 ] || fail "$name: status $st after $tries tries (ok-after-retry, 2 expected)"
  out=$(json "$A/runs/observations/$name.json" "d['tries'][0]['outcome']")
  if [ $MODE = crash ]; then want=crash; else want=hang-killed; fi
  [ "$out" = $want ] || fail "$name: first try outcome '$out', expected $want"
  ls "$A/runs/failed-runs/$name.try1."* >/dev/null 2>&1 || fail "$name: first try not kept under failed-runs/"
  grep -q "retrying once" "$A/attempt.log" || fail "attempt.log does not record the retry"
  # players built with other suites than the measured ones are not reused (they would be
  # measured in another layout than the baseline's module): the attempt says why and builds
  if [ $MODE = crash ]; then
    M="$W/mismatched"
    rm -rf "$M" "$W/mismatched-attempt"
    "$T" build --backend aot --staging "$W/quick/staging" --out "$M/aot" --subject tandem --suite primary \
      --suite smoke >"$W/mismatched-build.log" 2>&1 || fail "building the mismatched players"
    "$T" attempt --quick --from-git HEAD --out "$W/mismatched-attempt" --players-from "$M" --backends aot \
      >"$W/mismatched.log" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do
      grep -q "aot players from" "$W/mismatched-attempt/attempt.log" 2>/dev/null && break
      kill -0 $pid 2>/dev/null || break
      sleep 0.1
    done
    kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null
    grep -q 'aot players from .*: not reusable (.*player-aot.json: suites \["primary","smoke"\], not the 6 measured suites' \
      "$W/mismatched-attempt/attempt.log" || fail "players with other suites reused: $(grep 'players from' "$W/mismatched-attempt/attempt.log")"
  fi
  # TANDEM_TEST_FAULTS is required for the hidden option
  "$T" attempt --quick --out "$W/$MODE-refused" --test-fault $F >/dev/null 2>&1; [ $? = 2 ] || fail "--test-fault honoured without TANDEM_TEST_FAULTS=1"
  ;;
esac
[ $fails = 0 ] && echo "ok ($MODE)"
exit $fails
