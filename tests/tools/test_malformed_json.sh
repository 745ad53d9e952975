#!/usr/bin/env bash
# Malformed manifests and staging.json: each refused with the file and field named.
. "$(dirname "$0")/common.sh"
S=$W/src; make_src "$S"
run 0 "stage" "$T" stage --root "$S" --out "$W/st"
P=$W/p; mkdir -p "$P"; echo bin >"$P/module.so"
run 0 "manifest" "$H" manifest "$P" aot "$W/st" clang -O2 module.so
M=$P/binary-manifest-aot.json
cp "$M" "$W/good.json"
case_json() { # NAME EXPECTED-TEXT PYTHON-TRANSFORM(s -> s)
  python3 -c "import sys; s=open(sys.argv[1]).read(); exec(sys.argv[3]); open(sys.argv[2],'w').write(s)" "$W/good.json" "$M" "$3"
  run 1 "$1" "$T" verify "$P"
  expect "$2" "$1"
}
case_json truncated "$M: (document): truncated JSON" 's = s[:len(s)//2]'
case_json "trailing garbage" "$M: (document): trailing garbage" 's = s + "}garbage"'
case_json "duplicate key" "$M: backend: duplicate key" 's = s.replace("\"backend\":", "\"backend\":\t\"aot\",\n\t\"backend\":", 1)'
case_json "nested duplicate key" "$M: files[0].bytes: duplicate key" 's = s.replace("\"bytes\":", "\"bytes\": 1, \"bytes\":", 1)'
case_json "wrong type bytes" "$M: files[0].bytes: expected a number, got a string" 'import json; d=json.loads(s); d["files"][0]["bytes"]=str(d["files"][0]["bytes"]); s=json.dumps(d)'
case_json "wrong type backend" "$M: backend: expected a string, got a number" 's = s.replace("\"backend\":\t\"aot\"", "\"backend\": 7", 1)'
case_json "missing field" "$M: compiler: missing" 'import json; d=json.loads(s); del d["compiler"]; s=json.dumps(d)'
case_json "bad sha" "$M: files[0].sha256: expected 64 lowercase hex" 'import json; d=json.loads(s); d["files"][0]["sha256"]="XYZ"; s=json.dumps(d)'
case_json "unsafe path" "$M: files[0].path: unsafe path '../x'" 'import json; d=json.loads(s); d["files"][0]["path"]="../x"; s=json.dumps(d)'
case_json "schema" "$M: schemaVersion: unsupported version 9" 'import json; d=json.loads(s); d["schemaVersion"]=9; s=json.dumps(d)'
case_json "not an object" "$M: (document): expected a JSON object" 's = "[1, 2]"'
case_json "empty" "$M: (document): empty file" 's = ""'
cp "$W/good.json" "$M"
run 0 "good manifest again" "$T" verify "$P"
# staging.json too.
J=$W/st/staging.json; cp "$J" "$W/good-st.json"
case_st() {
  python3 -c "import sys; s=open(sys.argv[1]).read(); exec(sys.argv[3]); open(sys.argv[2],'w').write(s)" "$W/good-st.json" "$J" "$3"
  run 1 "$1" "$T" verify --staging "$W/st"
  expect "$2" "$1"
}
case_st "staging truncated" "$J: (document): truncated JSON" 's = s[:-30]'
case_st "staging trailing garbage" "$J: (document): trailing garbage" 's = s + "\n[]"'
case_st "staging duplicate key" "$J: fileCount: duplicate key" 's = s.replace("\"fileCount\":", "\"fileCount\": 5, \"fileCount\":", 1)'
case_st "staging wrong type" "$J: dirty: expected a boolean, got a string" 'import json; d=json.loads(s); d["dirty"]="no"; s=json.dumps(d)'
case_st "staging count" "$J: fileCount: says 9" 'import json; d=json.loads(s); d["fileCount"]=9; s=json.dumps(d)'
case_st "staging hash" "$J: stagingHash: does not match files[]" 'import json; d=json.loads(s); d["files"][0]["sha256"]="0"*64; s=json.dumps(d)'
case_st "staging unsorted" "$J: files[1].path: " 'import json; d=json.loads(s); d["files"][0],d["files"][1]=d["files"][1],d["files"][0]; s=json.dumps(d)'
finish
