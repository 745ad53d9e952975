#!/usr/bin/env bash
# stage --from-git: a revision staged through `git archive` read by libarchive.
. "$(dirname "$0")/common.sh"
S=$W/repo; make_src "$S"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git -C "$S" init -q && git -C "$S" add -A && git -C "$S" commit -q -m one || { echo "git setup failed"; exit 1; }
rev1=$(git -C "$S" rev-parse HEAD)
run 0 "stage worktree" "$T" stage --root "$S" --out "$W/wt"
python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));assert d["gitHead"]==sys.argv[2] and d["dirty"] is False' "$W/wt/staging.json" "$rev1" && pass || fail "gitHead/dirty of a clean tree"
echo '/* later */' >>"$S/runtime/src/a.c"
git -C "$S" commit -q -am two
echo '/* uncommitted */' >>"$S/runtime/src/a.c"
run 0 "stage dirty worktree" "$T" stage --root "$S" --out "$W/dirty"
expect "(working tree dirty)" "dirty flagged"
run 0 "stage --from-git rev1" "$T" stage --root "$S" --out "$W/g1" --from-git "$rev1"
python3 - "$W/g1/staging.json" "$W/wt/staging.json" "$rev1" <<'PY' && pass || fail "from-git staging equals the worktree staging of that revision"
import json, sys
g, w = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert g["stagingHash"] == w["stagingHash"], (g["stagingHash"], w["stagingHash"])
assert g["gitHead"] == sys.argv[3] and g["gitRev"] == sys.argv[3] and g["dirty"] is False
PY
diff -r "$W/g1/runtime" "$W/wt/runtime" >/dev/null && pass || fail "from-git files differ from the revision"
run 0 "verify from-git staging" "$T" verify --staging "$W/g1"
run 0 "stage --from-git HEAD onto rev1 staging" "$T" stage --root "$S" --out "$W/g1" --from-git HEAD
expect "different: runtime/src/a.c" "from-git difference reported"
grep -q later "$W/g1/runtime/src/a.c" && ! grep -q uncommitted "$W/g1/runtime/src/a.c" && pass || fail "HEAD content staged"
run 1 "unknown revision" "$T" stage --root "$S" --out "$W/g2" --from-git no-such-rev runtime
expect "no-such-rev" "unknown revision named"
# A committed symlink pointing outside the root is refused, naming it.
ln -s /etc/hostname "$S/runtime/src/evil.c"
ln -s ../include/tandem/a.h "$S/runtime/src/ok_link.h"
git -C "$S" add -A && git -C "$S" commit -q -m links
run 1 "from-git outside symlink" "$T" stage --root "$S" --out "$W/g3" --from-git HEAD
expect "runtime/src/evil.c: refused: symbolic link points outside the root" "outside link named"
git -C "$S" rm -q runtime/src/evil.c && git -C "$S" commit -q -m unevil
run 0 "from-git inside symlink" "$T" stage --root "$S" --out "$W/g4" --from-git HEAD
cmp "$W/g4/runtime/src/ok_link.h" "$S/runtime/include/tandem/a.h" && pass || fail "inside link content"
finish
