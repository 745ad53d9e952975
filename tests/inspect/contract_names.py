#!/usr/bin/env python3
"""Every helper a codegen contract's notes name exists in the code it describes (issue 41).

A contract's notes ("_note", "_rationale", ...) name the helpers, macros and fields its
rules lean on. A helper that was renamed or removed leaves a note that sends a reader
looking for code that is gone. This reads the contract with the json module and the
project's C sources as text, and fails naming each note identifier (a name with an
underscore, as C names here are) that appears in none of them; the contract's own field
names (no_locked, must_inline, ...) are not code. The rules' functions (the keys under
"functions") are `tandem inspect`'s own check (tools/inspect/names.c), on the code it
inspects, with the same meaning of "exists".

usage: contract_names.py CONTRACT_JSON SOURCE_DIR [SOURCE_DIR...]
"""
import glob
import json
import os
import re
import sys

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def notes(node, path):
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}" if path else key
            if key.startswith("_") and isinstance(value, str):
                yield sub, value
            else:
                yield from notes(value, sub)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from notes(value, f"{path}[{i}]")


def field_names(node, out):
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            field_names(value, out)
    elif isinstance(node, list):
        for value in node:
            field_names(value, out)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    contract_path, dirs = argv[1], argv[2:]
    try:
        with open(contract_path, encoding="utf-8") as f:
            contract = json.load(f)
    except (OSError, ValueError) as e:
        print(f"contract_names: {contract_path}: {e}", file=sys.stderr)
        return 1
    functions = contract.get("functions")
    if not isinstance(functions, dict):
        print(f"contract_names: {contract_path}: field 'functions': missing or not an object", file=sys.stderr)
        return 1
    code = set()
    for d in dirs:
        if not os.path.isdir(d):
            print(f"contract_names: {d}: not a folder", file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(d, "**", "*.[ch]"), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as f:
                code.update(IDENT.findall(f.read()))
    # Names the runtime's macros paste together (TD_METHOD_DEFINE(name, ...) defines
    # name##_runner_release_ and the others): every method's name with every pasted suffix.
    pasted_suffixes, methods = set(), set()
    for d in dirs:
        for path in glob.glob(os.path.join(d, "**", "*.[ch]"), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            pasted_suffixes.update(re.findall(r"\bname\s*##\s*([A-Za-z0-9_]+)", text))
            methods.update(re.findall(r"\bTD_METHOD_DEFINE\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)", text))
    code.update(m + sfx for m in methods for sfx in pasted_suffixes)
    fields = set()
    field_names(contract, fields)
    missing = []
    for where, text in notes(contract, ""):
        for word in IDENT.findall(text):
            if word.endswith("_") and text.find(word + "*") >= 0:    # a family: td_atomic_*
                if any(c.startswith(word) for c in code):
                    continue
            if "_" in word.strip("_") and word not in code and word not in fields:
                missing.append(f"{contract_path}: {where}: names '{word}', which is nowhere in the code")
    for line in missing:
        print(line)
    print(f"contract_names: {sum(1 for _ in notes(contract, ''))} notes, {len(missing)} unknown name(s)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
