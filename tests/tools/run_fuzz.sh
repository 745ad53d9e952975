#!/usr/bin/env bash
# Bounded libFuzzer run of the JSON parsers, seeded with valid and broken documents.
set -euo pipefail
fuzz=$1 seeds=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp "$seeds"/* "$work"/
"$fuzz" -runs=30000 -max_len=4096 -timeout=10 -max_total_time=60 "$work" 2>&1 | tail -n 5
