#!/usr/bin/env bash
# tandem.json (tools/lib/tl_project.c): a project's folders staged at their places of the
# staged layout (stage_project.h), and every kind of invalid field refused with the file
# and the field named. The repository's own tandem.json stages what --root . stages
# (except files outside the named folders).
. "$(dirname "$0")/common.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
P=$W/mylib
mkdir -p "$P/src" "$P/include/mylib" "$P/bench/mylib" "$P/sub/dir"
printf 'int mylib_x(void) { return 1; }\n' >"$P/src/x.c"
printf 'int mylib_x(void);\n' >"$P/include/mylib/x.h"
printf '/* subject */\n' >"$P/bench/mylib/mylib_subject.c"
write() {  # write JSON: the valid project with the python expression $1 applied to d
  python3 - "$P/tandem.json" "$1" <<'PY'
import json, sys
d = {"tandemProject": 1, "name": "mylib",
     "runtime": {"sources": "src", "include": "include"},
     "subjects": {"mylib": {"folder": "bench/mylib"},
                  "callback": {"folder": "@tandem/players/subjects/callback"}},
     "suites": {"primary": "@tandem/players/suites/primary"},
     "gate": {"subject": "mylib", "peers": ["callback"]},
     "attempt": {"rounds": 1, "samples": 3}}
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
}

write "pass"
run 0 "mapped project stages" "$T" stage --project "$P" --out "$W/st"
for f in runtime/src/x.c runtime/include/mylib/x.h players/subjects/mylib/mylib_subject.c \
         players/subjects/callback/callback_subject.c players/suites/primary/primary.c \
         players/include/tandem_player.h runtime/port/td_port.h; do
  [ -f "$W/st/$f" ] && pass || fail "staged $f missing"
done
cmp -s "$REPO/players/include/td_subject.h" "$W/st/players/include/td_subject.h" && pass || fail "players/include is not Tandem's"
[ ! -e "$W/st/players/subjects/fcontext" ] && pass || fail "a subject the project does not name was staged"
python3 - "$W/st/staging.json" <<'PY' && pass || fail "staging.json paths"
import json, sys
d = json.load(open(sys.argv[1]))
assert "runtime/src" in d["paths"] and "players/subjects/mylib" in d["paths"], d["paths"]
PY
# the nearest tandem.json from the current folder upward
(cd "$P/sub/dir" && run 0 "found upward" "$T" stage --out "$W/st2") && pass
cmp -s "$W/st/staging.json" "$W/st2/staging.json" && pass || fail "the project found upward staged differently"
run 2 "--project with --root" "$T" stage --project "$P" --root "$P" --out "$W/st3"
expect "give --project or --root, not both" "--project with --root"
run 1 "--project without tandem.json" "$T" stage --project "$W" --out "$W/st3"
expect "no tandem.json there" "--project without tandem.json"
for verb in stage attempt bench smoke gate inspect demo; do
  run 0 "$verb --help names --project" "$T" $verb --help
  expect "--project DIR" "$verb --help"
  expect "nearest tandem.json" "$verb --help gives the default rule"
done
# tandem bench: the project's suites, not Tandem's list
run 2 "bench of a suite the project does not have" "$T" bench --project "$P" --suite whenany --backend aot
expect "tandem bench: --suite: 'whenany' is not one of primary (the suites of $P/tandem.json but its smoke and demo suites)" "bench of another suite"
run 1 "smoke of a project without a smoke suite" "$T" smoke --project "$P" --out "$W/sm"
expect "$P/tandem.json: smoke: the project names no smoke suite" "smoke without a smoke suite"
# tandem demo: the project's demo suite on its gate subject; refused without one
run 1 "demo of a project without a demo suite" "$T" demo --project "$P" --out "$W/demo"
expect "$P/tandem.json: suites.demo: the project names no demo suite" "demo without a demo suite"
[ ! -e "$W/demo" ] && pass || fail "demo without a demo suite: $W/demo was created"
D=$W/rt   # Tandem's runtime under a subject name of its own (demo, smoke), found upward
mkdir -p "$D/sub"
cat >"$D/tandem.json" <<'JSON'
{"tandemProject": 1, "name": "rt",
 "runtime": {"sources": "@tandem/runtime/src", "include": "@tandem/runtime/include"},
 "subjects": {"rt": {"folder": "@tandem/players/subjects/tandem"}},
 "suites": {"demo": "@tandem/players/suites/demo", "smoke": "@tandem/players/suites/smoke"}, "smoke": "smoke",
 "gate": {"subject": "rt"}}
JSON
(cd "$D/sub" && run 0 "demo of a project's demo suite" "$T" demo --out "$W/demo-rt") && pass
expect "demo: both players ran the same demo suite on subject rt and passed" "demo of a project's demo suite"
for b in aot jit; do
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert [s["name"] for s in d["subjects"]] == ["rt"], d["subjects"]' \
    "$W/demo-rt/$b/demo-$b.json" && pass || fail "demo report $b: subject rt"
done
[ -f "$W/demo-rt/staging/staging.json" ] && pass || fail "demo: the project was not staged"
# tandem smoke runs the project's smoke suite on the gate subject's module, whatever its name
(cd "$D/sub" && run 0 "smoke on subject rt" "$T" smoke --backend jit --out "$W/smoke-rt") && pass
expect "jit: 42/42 cases passed" "smoke on subject rt"

# refusals: each names the file and the field
refuse() {  # refuse PY_EDIT FIELD_AND_REASON
  write "$1"
  run 1 "refuse: $1" "$T" stage --project "$P" --out "$W/bad" && expect "$P/tandem.json: $2" "refuse: $1"
}
refuse 'd["smok"] = "x"'                              'smok: unknown key'
refuse 'd["runtime"]["sourcs"] = "src"'               'runtime.sourcs: unknown key'
refuse 'del d["runtime"]["sources"]'                  'runtime.sources: missing'
refuse 'd["runtime"]["include"] = 3'                  'runtime.include: expected a string'
refuse 'd["runtime"]["sources"] = "nope"'             "runtime.sources: 'nope'"
refuse 'd["runtime"]["sources"] = "../mylib/src"'     "runtime.sources: '../mylib/src'"
refuse 'd["runtime"]["sources"] = "/etc"'             "runtime.sources: '/etc': absolute path"
refuse 'd["runtime"]["contract"] = "src"'             "runtime.contract: 'src'"
refuse 'd["subjects"]["my-lib"] = {"folder": "src"}'  'subjects.my-lib: a subject'"'"'s name must be a C identifier'
refuse 'd["subjects"]["mylib"]["libs"] = []'          'subjects.mylib.libs: unknown key'
refuse 'd["suites"] = {}'                             'suites: no suite'
refuse 'd["smoke"] = "primary2"'                      "smoke: 'primary2' is not one of the suites"
refuse 'd["gate"]["subject"] = "other"'               "gate.subject: 'other' is not one of the subjects"
refuse 'd["gate"]["peers"] = ["mylib"]'               "gate.peers[0]: 'mylib' is not one of the subjects other than gate.subject"
refuse 'd["gate"]["gatedSuites"] = ["whenany"]'       "gate.gatedSuites[0]: 'whenany' is not one of the suites"
refuse 'd["attempt"]["rounds"] = 0'                   'attempt.rounds: expected an integer from 1 to 20'
refuse 'd["attempt"]["samples"] = 2.5'                'attempt.samples: expected an integer'
refuse 'd["attempt"]["backends"] = ["aot", "llvm"]'   "attempt.backends[1]: 'llvm' is not aot or jit"
refuse 'd["tandemProject"] = 2'                       'tandemProject: expected an integer from 1 to 1'
refuse 'del d["gate"]'                                'gate: missing'
refuse 'd["subjects"]["mylib"]["link"] = "m"'        'subjects.mylib.link: expected an array of strings'
refuse 'd["subjects"]["mylib"]["link"] = ["-lm"]'     "subjects.mylib.link[0]: '-lm': expected a library name (linked as -lNAME"
refuse 'd["subjects"]["mylib"]["link"] = ["m", "lib/x.so"]' "subjects.mylib.link[1]: 'lib/x.so': expected a library name"
refuse 'd["subjects"]["mylib"]["link"] = ["/nonexistent/libx.so"]' \
  "subjects.mylib.link[0]: '/nonexistent/libx.so' is not an existing regular file"
printf 'm\n' >"$P/bench/mylib/link.libs"
refuse 'pass' "subjects.mylib: $P/bench/mylib/link.libs: a subject's link libraries are named in tandem.json (subjects.mylib.link), not in its folder"
rm "$P/bench/mylib/link.libs"
# the link field is staged as the subject's link.libs (the file the backends read), one a line
LIBFILE=$(python3 -c 'import glob; print((glob.glob("/usr/lib/*/libm.so.6") + glob.glob("/lib/*/libm.so.6"))[0])')
write 'd["subjects"]["mylib"]["link"] = ["m", "'"$LIBFILE"'"]'
run 0 "link libraries staged" "$T" stage --project "$P" --out "$W/stl"
[ "$(cat "$W/stl/players/subjects/mylib/link.libs")" = "$(printf 'm\n%s' "$LIBFILE")" ] && pass ||
  fail "staged link.libs: $(cat "$W/stl/players/subjects/mylib/link.libs")"
[ ! -e "$W/stl/players/subjects/callback/link.libs" ] && pass || fail "a subject without link got a link.libs"
grep -q '"players/subjects/mylib/link.libs"' "$W/stl/staging.json" && pass || fail "staging.json does not list link.libs"
run 0 "the staged link.libs verifies" "$T" verify --staging "$W/stl"
# ... and the build uses it: fcontext's folder under another name, with and without its library
L=$W/linkp
mkdir -p "$L"
linkp() {  # linkp LINK_JSON
  cat >"$L/tandem.json" <<JSON
{"tandemProject": 1, "name": "linkp",
 "runtime": {"sources": "@tandem/runtime/src", "include": "@tandem/runtime/include"},
 "subjects": {"fc2": {"folder": "@tandem/players/subjects/fcontext"$1}},
 "suites": {"primary": "@tandem/players/suites/primary"},
 "gate": {"subject": "fc2"}}
JSON
}
fc2() {  # fc2 BACKEND NAME: stage, build fcontext as fc2 and load it in the player shell
  local st=$W/lw-$2/staging pl=$W/lw-$2/$1
  "$T" stage --project "$L" --out "$st" >/dev/null &&
  "$T" build --backend "$1" --staging "$st" --out "$pl" --subject fc2 --suite primary &&
  if [ "$1" = aot ]; then "$pl/tandem-player" --backend aot --module "$pl/fc2.so" --subjects
  else "$pl/tandem-player" --backend jit --tu "$pl/src/tandem-player-fc2.c" --root "$pl/src" --subjects; fi
}
linkp ''
run 1 "jit: fcontext without its library" fc2 jit none && expect "jump_fcontext" "jit: fcontext without its library"
# (AOT: clang links the module with the symbol undefined; the player shell cannot load it, exit 3)
run 3 "aot: fcontext without its library" fc2 aot none && expect "fc2.so: undefined symbol: " "aot: fcontext without its library"
expect "_fcontext" "aot: fcontext without its library"
linkp ', "link": ["boost_context"]'
run 0 "jit: fcontext linking boost_context by name" fc2 jit name
run 0 "aot: fcontext linking boost_context by name" fc2 aot name
linkp ', "link": ["tandem_no_such_lib"]'
run 1 "jit: an unknown library" fc2 jit unknown
expect "subject fc2 links -ltandem_no_such_lib (players/subjects/fc2/link.libs, from the project's subjects.fc2.link): no such library on tcc's library path" \
  "jit: an unknown library"
run 1 "aot: an unknown library" fc2 aot unknown && expect "tandem_no_such_lib" "aot: an unknown library"
write "pass"
printf '{"tandemProject": 1,' >"$P/tandem.json"
run 1 "truncated JSON" "$T" stage --project "$P" --out "$W/bad" && expect "$P/tandem.json" "truncated JSON"

# a project's staging always holds Tandem's players/include (above); a --root tree without it
# gives a staging the build refuses, naming the missing header (no fallback to Tandem's tree)
R=$W/oldtree
mkdir -p "$R/players"
cp -r "$REPO/runtime" "$R/runtime"
mkdir -p "$R/players/subjects" "$R/players/suites"
cp -r "$REPO/players/subjects/callback" "$R/players/subjects/"
cp -r "$REPO/players/suites/primary" "$R/players/suites/"
run 0 "stage a --root tree without players/include" "$T" stage --root "$R" --out "$W/oldst"
expect "default path players/include not present" "stage a --root tree without players/include"
run 1 "build from a staging without players/include" "$T" build --backend jit --shell /bin/true \
  --staging "$W/oldst" --out "$W/oldpl"
expect "$W/oldst/players/include/tandem_player.h: missing (or not a regular file): the staging has no player ABI headers" \
  "build from a staging without players/include"
[ -z "$(ls -A "$W/oldpl" 2>/dev/null)" ] && pass || fail "the refused build wrote into $W/oldpl"

# the repository's own project file stages its runtime, harness, subjects and suites
run 0 "repository project" "$T" stage --project "$REPO" --out "$W/self"
for f in runtime/src/task.c runtime/contract.json players/subjects/tandem players/suites/smoke; do
  [ -e "$W/self/$f" ] && pass || fail "repository staging lacks $f"
done
finish
