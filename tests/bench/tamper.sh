#!/bin/sh
# tamper.sh PYTHON CHECKER REPORT: the checker accepts REPORT and rejects a copy whose
# nsPerOp no longer matches the raw samples, a copy marked incomplete, and a copy with a
# sample under 1 ms (its ns, nsPerOp and medianNsPerOp made consistent again, so only the
# sample length is wrong).
set -e
py=$1 checker=$2 report=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$checker" "$report" throughput aot 2 >/dev/null
"$py" - "$report" "$tmp/a.json" "$tmp/b.json" "$tmp/c.json" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if x.get("supported")][0]
r["nsPerOp"] = r["nsPerOp"] * 1.5 + 1
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["completed"] = False
json.dump(d, open(sys.argv[3], "w"))
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if x.get("supported")][0]
r["ns"][0] = 999999
r["sampleRecords"][0]["ns"] = 999999
r["minSampleNs"] = min(r["ns"])
sub = r["controlSubtracted"]
c = [x if sub else 0 for x in r["controlNs"]]
r["nsPerOp"] = (sum(r["ns"]) - sum(c)) / sum(r["ops"])
r["medianNsPerOp"] = statistics.median((t - k) / o for t, k, o in zip(r["ns"], c, r["ops"]))
cost = d["clock"]["readCostNs"]
r["clockShares"] = [s * cost / t for s, t in zip(r["segments"], r["ns"])]
r["clockShare"] = max(r["clockShares"])
r["clockShareOver"] = r["clockShare"] > 0.01
json.dump(d, open(sys.argv[4], "w"))
PY
for f in a b c; do
  if "$py" "$checker" "$tmp/$f.json" throughput aot 2 >/dev/null 2>&1; then
    echo "checker accepted a tampered report ($f)"; exit 1
  fi
done
echo "checker rejects tampered reports"
