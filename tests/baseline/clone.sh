# Shared by the baseline tests: a temporary clone of the repository's committed HEAD
# (never the working tree, which other work may be changing) with a committer set.
# usage: . clone.sh SRC DIR   -> $base (HEAD of the clone)
td_clone() {
  git clone -q --no-hardlinks "$1" "$2" || { echo "FAIL: cannot clone $1"; exit 1; }
  git -C "$2" config user.name "baseline test"
  git -C "$2" config user.email "baseline@test"
  base=$(git -C "$2" rev-parse HEAD)
}
# Build the tandem subject's player for the bench suites from STAGING into DIR (what
# `tandem bench` reuses), so a test does not build the peers it does not run.
td_player() { # TANDEM BACKEND STAGING DIR
  "$1" build --backend "$2" --staging "$3" --out "$4" --subject tandem --suite primary --suite builderlifecycle \
    --suite throughput --suite whenany --suite buildercycle --suite cancellation >/dev/null || { echo "FAIL: build $2 from $3"; exit 1; }
}
