#!/usr/bin/env bash
# `tandem smoke` from a fresh staging of the repository: every case passes on both players.
# usage: smoke_full.sh TANDEM WORKDIR
set -euo pipefail
tandem=$1 work=$2
rm -rf "$work"
"$tandem" smoke --out "$work" | grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS"
test -s "$work/smoke-aot.json" && test -s "$work/smoke-jit.json"
