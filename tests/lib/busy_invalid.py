#!/usr/bin/env python3
"""busy_invalid.py ATTEMPT_DIR: prints True when the attempt's gate is INVALID for the busy
host alone (tools/gate/gate_busy.c: every FAIL rests on processes observed busy), else False.

A quick attempt inside a parallel ctest run shares its 2 cores with other tests, so the
attempt rightly refuses to call such a FAIL a verdict; a test that wants a verdict accepts
that one INVALID reason, and no other, in its place."""
import json
import sys

try:
    with open(sys.argv[1] + "/gate/gate-summary.json") as f:
        invalid = json.load(f)["invalid"]
except (OSError, ValueError, KeyError, IndexError):
    invalid = []
print(len(invalid) == 1 and invalid[0].startswith("every FAIL rests on processes observed busy"))
