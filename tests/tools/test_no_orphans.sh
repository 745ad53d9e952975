#!/usr/bin/env bash
# A tool killed with SIGKILL leaves nothing running (issue 18): `tandem bench` is killed
# while its player runs (200 samples of primary: a minute or more); the player, started through tl_run
# with PR_SET_PDEATHSIG, must be gone within a second. (SIGINT/SIGTERM of an attempt:
# the tests/gate attempt tests.)
. "$(dirname "$0")/common.sh"
mine() { pgrep -f -- "$W/sk" || true; }
"$T" bench --suite primary --backend aot --subject tandem --samples 200 --work "$W/sk" >"$W/smoke.log" 2>&1 &
smoke=$!
# wait (60 s at most) until a tandem-player of this run is running
for i in $(seq 600); do
  pgrep -f -- "$W/sk/aot/tandem-player --backend" >/dev/null && break
  kill -0 "$smoke" 2>/dev/null || break
  sleep 0.1
done
if pgrep -f -- "$W/sk/aot/tandem-player --backend" >/dev/null; then
  pass
  kill -KILL "$smoke"
  wait "$smoke" 2>/dev/null
  for i in $(seq 10); do [ -z "$(mine)" ] && break; sleep 0.1; done
  left=$(mine)
  [ -z "$left" ] && pass || { fail "processes left after SIGKILL of tandem bench: $(ps -o pid,args -p $(echo $left | tr ' ' ',') | tail -n +2)"; kill -KILL $left 2>/dev/null; }
else
  fail "no player of tandem bench was seen running (see the log below)"
  sed 's/^/    /' "$W/smoke.log" | tail -5
fi
finish
