#!/bin/sh
# tamper.sh PYTHON CHECKER REPORT: the checker accepts REPORT and rejects a copy whose
# nsPerOp no longer matches the raw samples, and a copy marked incomplete.
set -e
py=$1 checker=$2 report=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$checker" "$report" throughput aot 2 >/dev/null
"$py" - "$report" "$tmp/a.json" "$tmp/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if x.get("supported")][0]
r["nsPerOp"] = r["nsPerOp"] * 1.5 + 1
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["completed"] = False
json.dump(d, open(sys.argv[3], "w"))
PY
for f in a b; do
  if "$py" "$checker" "$tmp/$f.json" throughput aot 2 >/dev/null 2>&1; then
    echo "checker accepted a tampered report ($f)"; exit 1
  fi
done
echo "checker rejects tampered reports"
