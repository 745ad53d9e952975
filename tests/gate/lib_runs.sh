# lib_runs.sh - sourced by the gate tests that alter a copy of a published attempt's runs:
# the failure counter, unpacking the runs and the configuration that attempt ran with.
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# runs_unpack ZIP DIR: the packet's runs in a fresh DIR, without its logs and files.sha256
# (the gate reads every report it finds; the logs are not reports)
runs_unpack() {
  rm -rf "$2" && mkdir -p "$2"
  (cd "$2" && unzip -q "$1") || { echo "cannot unpack $1"; exit 1; }
  rm -rf "$2/logs" "$2/files.sha256"
}

# runs_config TANDEM OUT: the built-in configuration as the 2026-11-30 default attempt ran it
# (22 processes of 8 samples; it predates the cancellation suite: no process of it)
runs_config() {
  "$1" gate --print-config >"$2.default" || { echo "cannot print the configuration"; exit 1; }
  python3 - "$2.default" "$2" <<'PY' || { echo "cannot write $2"; exit 1; }
import json, sys
c = json.load(open(sys.argv[1]))
c["expectedProcesses"] = 22
for s in c["suites"]:
    if s["name"] == "cancellation": s["gated"] = False
    s["samples"] = 8
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}

# runs_fixture TANDEM ZIP W: a fresh W with the packet's runs in W/base and the configuration
# in W/config.json
runs_fixture() {
  rm -rf "$3"
  runs_unpack "$2" "$3/base"
  runs_config "$1" "$3/config.json"
}
