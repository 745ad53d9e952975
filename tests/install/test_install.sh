#!/bin/bash
# test_install.sh BUILD_DIR SOURCE_DIR: install Tandem into a scratch prefix, move the prefix,
# and use it as a user would with the clone out of reach (issue 43, item 1):
#   - no source or build path in the installed programs (strings);
#   - the layout: share/tandem (the home), include/tandem-player + pkg-config, man pages that
#     `man` reads, a bash completion that completes verbs and options;
#   - the home found beside the executable, TANDEM_HOME over it, a clear error without one;
#   - the .deb (CPack): its Depends, and its contents (dpkg-deb -x) as the prefix below;
#   - installed_run.sh (under a mount namespace hiding SOURCE_DIR and BUILD_DIR when
#     `unshare -m` works): tandem init + tandem attempt --quick + tandem smoke, every result
#     under the user's folders.
B=$(cd "$1" && pwd) S=$(cd "$2" && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/tandem-install-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
for v in TANDEM_HOME TANDEM_PLAYER TANDEM_CLANG XDG_CACHE_HOME; do unset "$v"; done

cmake --install "$B" --prefix "$W/first/usr" >"$W/install.log" 2>&1 || { cat "$W/install.log"; echo "FAIL: cmake --install"; exit 1; }
# relocatable: the prefix moved after the install, the first place gone
mkdir -p "$W/moved" && mv "$W/first/usr" "$W/moved/usr" && rm -rf "$W/first"
P=$W/moved/usr
for f in bin/tandem bin/tandem-player share/tandem/tandem.json share/tandem/players/include/td_subject.h \
         share/tandem/runtime/port/td_port.h share/tandem/players/suites/smoke/smoke.c \
         include/tandem-player/td_subject.h lib/pkgconfig/tandem-player.pc share/man/man1/tandem.1 \
         share/man/man1/tandem-attempt.1 share/bash-completion/completions/tandem; do
  [ -f "$P/$f" ] || fail "not installed: $f"
done
for f in bin/tandem bin/tandem-player; do
  for tree in "$S" "$B"; do
    strings "$P/$f" | grep -F -q "$tree" && fail "$f names $tree: $(strings "$P/$f" | grep -F "$tree" | head -2)"
  done
done

# man pages: one per verb, read by man(1) from the installed prefix
for v in $("$P/bin/tandem" --help | awk '/^verbs:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  [ -f "$P/share/man/man1/tandem-$v.1" ] || fail "no man page for verb $v"
done
man -l "$P/share/man/man1/tandem-attempt.1" 2>/dev/null | grep -q -- "--quick" || fail "man -l tandem-attempt.1: no --quick"
MANPATH=$P/share/man man -P cat tandem-smoke 2>/dev/null | grep -q "tandem-smoke" || fail "MANPATH=... man tandem-smoke"

# bash completion: verbs, a verb's options, folders after a DIR option
comp() { (source "$P/share/bash-completion/completions/tandem"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
          _tandem; echo "${COMPREPLY[*]}"); }
[ "$(comp tandem att)" = attempt ] || fail "completion 'tandem att': '$(comp tandem att)'"
[ "$(comp tandem attempt --rou)" = --rounds ] || fail "completion 'tandem attempt --rou': '$(comp tandem attempt --rou)'"
(cd "$P" && [ "$(comp tandem smoke --project sha)" = share ]) || fail "completion of a folder after --project"

# pkg-config: the subject ABI compiles from the installed header alone
if command -v pkg-config >/dev/null; then
  home=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --variable=tandem_home tandem-player)
  [ "$(cd "$home" 2>/dev/null && pwd -P)" = "$(cd "$P/share/tandem" && pwd -P)" ] || fail "pkg-config tandem_home: $home"
  printf '#include <td_subject.h>\nint main(void) { return (int)sizeof(td_subject_ops) == 0; }\n' >"$W/abi.c"
  cc $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags tandem-player) "$W/abi.c" -o "$W/abi" 2>"$W/cc.log" \
    || { fail "td_subject.h does not compile from the install"; cat "$W/cc.log"; }
fi

# TANDEM_HOME: a program away from its prefix finds nothing and says where it looked; the
# variable points it home; a wrong one is named
mkdir -p "$W/lonely" && cp "$P/bin/tandem" "$P/bin/tandem-player" "$W/lonely/"
(cd "$W" && "$W/lonely/tandem" stage --dry-run) >"$W/out" 2>&1 && fail "a lonely tandem staged without a home"
grep -q "cannot find Tandem's data.*TANDEM_HOME" "$W/out" || { fail "no home: message"; cat "$W/out"; }
(cd "$W" && TANDEM_HOME=$P/share/tandem "$W/lonely/tandem" stage --out "$W/st") >"$W/out" 2>&1 \
  && [ -f "$W/st/staging.json" ] || { fail "TANDEM_HOME=PREFIX/share/tandem: stage"; cat "$W/out"; }
(cd "$W" && TANDEM_HOME=$W "$P/bin/tandem" stage --dry-run) >"$W/out" 2>&1 && fail "a TANDEM_HOME without data accepted"
grep -q "TANDEM_HOME: not Tandem's home" "$W/out" || { fail "bad TANDEM_HOME: message"; cat "$W/out"; }

# the Debian package (CPack, as `make package` builds it): its Depends name the run-time
# packages, and its contents, extracted into a scratch folder, are the prefix of the user's run
cpack --config "$B/CPackConfig.cmake" -B "$W/pkg" >"$W/cpack.log" 2>&1 || { cat "$W/cpack.log"; fail "cpack"; }
deb=$(ls "$W"/pkg/tandem_*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
  dep=$(dpkg-deb -f "$deb" Depends)
  for d in clang tcc libc6-dev libboost-context-dev libcjson1 libarchive13; do
    case ", $dep," in *", $d,"*) ;; *) fail "the .deb's Depends lacks $d: $dep" ;; esac
  done
  dpkg-deb -x "$deb" "$W/deb" && [ -x "$W/deb/usr/bin/tandem" ] && P=$W/deb/usr || fail "dpkg-deb -x: no usr/bin/tandem"
else
  fail "cpack wrote no .deb"
fi

# the user's part, with the clone out of reach
cp "$(dirname "$0")/installed_run.sh" "$W/run.sh"
mkdir -p "$W/user/home"
hide="mount -t tmpfs none \"$S\""
case "$B/" in "$S"/*) ;; *) hide="$hide && mount -t tmpfs none \"$B\"" ;; esac
if unshare -m true 2>/dev/null; then
  unshare -m bash -c "$hide && exec bash \"$W/run.sh\" \"$P\" \"$W/user\" \"$S\" hidden" || fails=$((fails + 1))
else
  echo "note: no mount namespace here (unshare -m refused): the trees stay reachable; the strings check above" \
       "and the run below still show nothing of them is used"
  bash "$W/run.sh" "$P" "$W/user" "$S" reachable || fails=$((fails + 1))
fi
[ $fails = 0 ] && echo "install: PASS" || echo "install: $fails failure(s)"
[ $fails = 0 ]
