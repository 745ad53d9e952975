#!/bin/bash
# test_version.sh TANDEM: `tandem --version` and `tandem version` print one line naming
# tandem (version and git revision), clang, LLVM, tcc, cJSON, libarchive and OpenSSL, each
# with a version number.
T=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# --version / version: one line naming each component
for form in --version version; do
  "$T" $form >"$W/v" 2>&1; rc=$?
  [ $rc = 0 ] || fail "tandem $form: exit $rc"
  [ "$(wc -l <"$W/v")" = 1 ] || fail "tandem $form: $(wc -l <"$W/v") lines"
  for c in "tandem " "clang " "LLVM " "tcc " "cJSON " "libarchive " "OpenSSL "; do
    grep -qF "$c" "$W/v" || fail "tandem $form lacks '$c': $(cat "$W/v")"
  done
  grep -qE '^tandem [^ ]+ \((git [0-9a-f]{7,}|git unknown)' "$W/v" || fail "tandem $form: no git revision: $(cat "$W/v")"
done
echo "version line: $(cat "$W/v")"

# each component followed by a version number (the git revision may be "unknown" outside git)
for c in clang LLVM tcc cJSON libarchive OpenSSL; do
  grep -qE "(^|; )$c [0-9]+\.[0-9]+" "$W/v" || fail "no version number after '$c': $(cat "$W/v")"
done
"$T" version --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "tandem version --bogus: not a usage error"
[ $fails = 0 ] && echo "version: ok" && exit 0
echo "version: $fails failure(s)"
exit 1
