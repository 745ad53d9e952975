#!/bin/bash
# test_attempt_contained.sh TANDEM MODE WORK: the attempt is contained (issue 18). (Refusals
# of --out and of names from the arguments: the hostile suite, tests/hostile/cases_files.py.)
#   sigterm  SIGTERM while `tandem build` compiles (clang running in its group): exit 1,
#            the manifest says aborted with SIGTERM, no process of the attempt left.
#   sigint   SIGINT while a player process runs (--test-fault hang@1, the players of the
#            quick attempt reused): same, and the process is recorded as aborted.
set -uo pipefail
T=$1
MODE=$2
W=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# pids (other than $2) whose command line holds the fixed string $1; zombies have none
procs_with() {
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "${2:-}" ] && continue
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$1" && echo "$p"
  done
}
# wait_gone PID SECONDS: wait for a background child, killing it (and failing) after SECONDS
wait_exit() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
    sleep 0.1
  done
  fail "the attempt did not stop within $secs s of the signal"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  return 255
}
# check_aborted A RC SIGNAME SIGNUM
check_aborted() {
  local A=$1 rc=$2 name=$3 num=$4 left
  [ "$rc" = 1 ] || fail "$MODE: exit $rc, expected 1 (aborted)"
  [ -f "$A/attempt-manifest.json" ] || { fail "$MODE: no attempt-manifest.json"; return; }
  [ "$(json "$A/attempt-manifest.json" "d['stage']")" = aborted ] || fail "$MODE: manifest stage is not 'aborted'"
  [ "$(json "$A/attempt-manifest.json" "d.get('aborted',{}).get('signalName')")" = "$name" ] ||
    fail "$MODE: manifest does not name $name"
  [ "$(json "$A/attempt-manifest.json" "d.get('aborted',{}).get('signal')")" = "$num" ] ||
    fail "$MODE: manifest signal is not $num"
  grep -q "aborted by $name" "$A/attempt.log" || fail "$MODE: attempt.log does not record the abort"
  left=$(procs_with "$A")
  [ -z "$left" ] || { fail "$MODE: processes of the attempt outlived it: $left"; ps -o pid,pgid,args -p $left; kill -KILL $left; }
}

case $MODE in
sigterm)
  A="$W/sigterm"
  rm -rf "$A"
  "$T" attempt --quick --from-git HEAD --out "$A" >"$W/sigterm.log" 2>&1 &
  pid=$!
  # wait until `tandem build` runs a compiler for the attempt (two processes besides it)
  for ((i = 0; i < 600; i++)); do
    n=$(procs_with "$A/players" "$pid" | wc -l)
    [ "$n" -ge 2 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  [ "$n" -ge 2 ] || fail "the build's processes were never seen (found $n)"
  echo "sending SIGTERM with $(procs_with "$A" "$pid" | wc -l) child process(es) running"
  kill -TERM $pid
  wait_exit $pid 15; rc=$?
  check_aborted "$A" $rc SIGTERM 15
  ;;
sigint)
  P="$W/quick/players"
  [ -d "$P/aot" ] || { echo "no players from the quick attempt"; exit 1; }
  A="$W/sigint"
  rm -rf "$A"
  TANDEM_TEST_FAULTS=1 "$T" attempt --quick --from-git HEAD --out "$A" --players-from "$P" \
    --test-fault hang@1 --timeout 60 >"$W/sigint.log" 2>&1 &
  pid=$!
  for ((i = 0; i < 600; i++)); do
    ls "$A"/runs/logs/p01-*.try1.err >/dev/null 2>&1 && [ -s "$(ls "$A"/runs/logs/p01-*.try1.err)" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  n=$(procs_with "$A" "$pid" | wc -l)
  [ "$n" -ge 1 ] || fail "the hanging process was never seen"
  echo "sending SIGINT with $n child process(es) running"
  kill -INT $pid
  wait_exit $pid 15; rc=$?
  check_aborted "$A" $rc SIGINT 2
  if [ -f "$A/attempt-manifest.json" ]; then
    st=$(json "$A/attempt-manifest.json" "d['processes'][0]['status']")
    [ "$st" = aborted ] || fail "process 1 status '$st', expected aborted"
    nm=$(json "$A/attempt-manifest.json" "d['processes'][0]['name']")
    out=$(json "$A/runs/observations/$nm.json" "d['tries'][0]['outcome']")
    [ "$out" = aborted ] || fail "$nm: observation outcome '$out', expected aborted"
    [ ! -e "$A/files.sha256" ] || fail "an aborted attempt wrote files.sha256"
  fi
  ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
[ $fails = 0 ] && echo "ok ($MODE)"
exit $fails
