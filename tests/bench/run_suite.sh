#!/bin/sh
# run_suite.sh TANDEM SUITE BACKEND WORK PYTHON CHECKER: one quick bench run (reusing
# WORK/<backend>), then the report check.
set -e
tandem=$1 suite=$2 backend=$3 work=$4 py=$5 checker=$6
report="$work/$suite-$backend.json"
rm -f "$report"
status=0
"$tandem" bench --suite "$suite" --backend "$backend" --quick --work "$work" --staging "$work/staging" \
  --out "$report" --timeout 240 || status=$?
"$py" "$checker" "$report" "$suite" "$backend" 2
echo "tandem bench exit: $status"
exit $status
