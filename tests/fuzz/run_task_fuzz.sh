#!/usr/bin/env bash
# Bounded libFuzzer run of the task-protocol fuzzer: FUZZER CORPUS SECONDS.
# The corpus is copied to a temporary directory (new inputs never land in the repository);
# a fixed seed and one process keep the run repeatable on a shared machine.
set -euo pipefail
fuzz=$1 corpus=$2 seconds=${3:-45}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$corpus"/* "$work/corpus/"
cd "$work"
"$fuzz" -seed=1 -max_len=1024 -timeout=10 -max_total_time="$seconds" \
  -print_final_stats=1 corpus 2>&1 | grep -v '^#\|NEW_FUNC' | tail -n 12
